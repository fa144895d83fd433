import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ScenarioConfig } from './config/scenarios.ts';
import { peakArrivalRate } from './warm-up.ts';

const base = { startTimeNs: 0, gracefulStopNs: 30e9, exec: 'default', env: {}, tags: {} };

test('peakArrivalRate: the highest planned rate per second over arrival-rate scenarios only', () => {
  const scenarios: ScenarioConfig[] = [
    { ...base, name: 'vus', executor: 'constant-vus', vus: 5000, durationNs: 1e9 },
    {
      ...base,
      name: 'car',
      executor: 'constant-arrival-rate',
      rate: 30,
      timeUnitNs: 10e6, // 30 per 10 ms = 3,000/s
      durationNs: 1e9,
      preAllocatedVUs: 1,
      maxVUs: 1,
    },
    {
      ...base,
      name: 'rar',
      executor: 'ramping-arrival-rate',
      startRate: 10,
      timeUnitNs: 1e9,
      stages: [
        { durationNs: 1e9, target: 2500 },
        { durationNs: 1e9, target: 0 },
      ],
      preAllocatedVUs: 1,
      maxVUs: 1,
    },
  ];
  assert.equal(peakArrivalRate(scenarios), 3000);
  assert.equal(peakArrivalRate(scenarios.slice(2)), 2500);
  assert.equal(peakArrivalRate(scenarios.slice(0, 1)), 0, 'VU-based executors plan no rate');
});
