import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetricRegistry } from '../metrics/registry.ts';
import type { CounterSink } from '../metrics/sinks.ts';
import { ScenarioBreakdown } from './scenario-breakdown.ts';

test('samples are gathered by scenario, and within it by each group on their path, inner groups included', () => {
  const registry = new MetricRegistry();
  const reqs = registry.builtin('http_reqs');
  const checks = registry.builtin('checks');
  const breakdown = new ScenarioBreakdown();
  const add = (tags: Record<string, string>, value = 1) =>
    breakdown.add({ timeMs: 0, tags, metrics: [reqs], values: [value] });
  add({ scenario: 'a', group: '' });
  add({ scenario: 'a', group: '::outer' });
  add({ scenario: 'a', group: '::outer::inner' });
  add({ scenario: 'b', group: '::outer' });
  add({ group: '::setup' }); // no scenario: setup and teardown stay out
  breakdown.add({
    timeMs: 0,
    tags: { scenario: 'a', group: '::outer', check: 'ok' },
    metrics: [checks],
    values: [0],
  });
  breakdown.add({
    timeMs: 0,
    tags: { scenario: 'a', group: '::outer', check: 'ok' },
    metrics: [checks],
    values: [1],
  });

  const count = (block: { metrics: Map<string, { sink: unknown }> } | undefined) =>
    (block?.metrics.get('http_reqs')?.sink as CounterSink | undefined)?.count;
  const a = breakdown.scenarios.get('a');
  assert.deepEqual([...breakdown.scenarios.keys()], ['a', 'b']);
  assert.equal(count(a), 3);
  assert.equal(count(a?.groups.get('outer')), 2);
  assert.equal(count(a?.groups.get('outer')?.groups.get('inner')), 1);
  assert.equal(count(breakdown.scenarios.get('b')), 1);
  // Checks by name, in the scenario and in the group they ran in.
  assert.deepEqual(a?.checks.get('ok'), { passes: 1, fails: 1 });
  assert.deepEqual(a?.groups.get('outer')?.checks.get('ok'), { passes: 1, fails: 1 });
  assert.equal(a?.groups.get('outer')?.groups.get('inner')?.checks.size, 0);
});
