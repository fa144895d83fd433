import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResourceStepFigures } from '../../../contract/index.ts';
import { DEFAULT_CRITERIA } from '../criteria.ts';
import { resourceFigures } from '../test-rows.ts';
import { cpuRule } from './cpu.ts';

/** A process's CPU of 2 cores, `busy` of them busy. */
const cpu = (busy: number | null, capacity: number | null = 2) =>
  resourceFigures('process cpu', 'cpu', 'cpu', { inUseMean: busy, capacity });

test('a CPU is full from 85 % of its cores busy', () => {
  const cases: { says: string; now: ResourceStepFigures; saturated: boolean }[] = [
    // 1.8 of 2 cores: 90 %.
    { says: '90 %', now: cpu(1.8), saturated: true },
    // 1.7 of 2 cores: exactly 85 %.
    { says: '85 %', now: cpu(1.7), saturated: true },
    // 1 of 2 cores: half.
    { says: '50 %', now: cpu(1), saturated: false },
    // Busy cores known but not how many there are: no utilisation, never full.
    { says: 'cores unknown', now: cpu(1.8, null), saturated: false },
  ];
  for (const c of cases)
    assert.equal(cpuRule.judge(c.now, cpu(0.2), 'r020', DEFAULT_CRITERIA).saturated, c.saturated, c.says);
});

test("a CPU's figures in words, with the first step's utilisation", () => {
  assert.equal(
    cpuRule.judge(cpu(1.8), cpu(0.2), 'r020', DEFAULT_CRITERIA).text,
    'process cpu 1.8 of 2 cores busy (90%) (10% at r020)',
  );
  assert.equal(cpuRule.judge(cpu(null), undefined, 'r020', DEFAULT_CRITERIA).text, 'process cpu unknown');
});

test('what a request held of the CPU at the first step: CPU-seconds, cores busy ÷ served', () => {
  const cases: { says: string; base: ResourceStepFigures; servedPerSec: number; hold: number | null }[] = [
    // 0.2 cores busy at 20/s: 10 ms of CPU a request.
    { says: 'busy', base: cpu(0.2), servedPerSec: 20, hold: 0.01 },
    // Nothing busy, nothing served, or busy unknown: no hold time.
    { says: 'idle', base: cpu(0), servedPerSec: 20, hold: null },
    { says: 'nothing served', base: cpu(0.2), servedPerSec: 0, hold: null },
    { says: 'unknown', base: cpu(null), servedPerSec: 20, hold: null },
  ];
  for (const c of cases) assert.equal(cpuRule.holdPerRequest(c.base, c.servedPerSec), c.hold, c.says);
});
