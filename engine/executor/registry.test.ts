import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PlateauError } from '../../contract/index.ts';
import { consolidateOptions } from '../config/options.ts';
import { ExecutionTuple } from '../schedule/execution-segment.ts';
import { arrivalPlan, EXECUTOR_NAMES, isArrivalRate, maxDurationNs, regularDurationNs } from './registry.ts';

const MINIMAL: Record<string, Record<string, unknown>> = {
  'constant-arrival-rate': { rate: 10, duration: '2s', preAllocatedVUs: 2 },
  'ramping-arrival-rate': { preAllocatedVUs: 2, stages: [{ duration: '2s', target: 10 }] },
  'constant-vus': { vus: 2, duration: '2s' },
  'ramping-vus': { stages: [{ duration: '2s', target: 3 }], gracefulRampDown: '40s' },
  'per-vu-iterations': { vus: 2, iterations: 3 },
  'shared-iterations': { vus: 2, iterations: 3 },
};

test("the registry holds k6's six executors, each read by its own parser", () => {
  assert.deepEqual([...EXECUTOR_NAMES].sort(), Object.keys(MINIMAL).sort());
  for (const name of EXECUTOR_NAMES) {
    const [scenario] = consolidateOptions({
      scenarios: { s: { executor: name, ...MINIMAL[name] } },
    }).scenarios;
    assert.ok(scenario, name);
    assert.equal(scenario.executor, name);
    assert.equal(isArrivalRate(scenario), name.endsWith('arrival-rate'), name);
    assert.equal(arrivalPlan(scenario) !== undefined, name.endsWith('arrival-rate'), name);
  }
});

test('durations come from the executor: stages, duration or maxDuration, plus the graceful time', () => {
  const read = (name: string) =>
    consolidateOptions({ scenarios: { s: { executor: name, ...MINIMAL[name] } } }).scenarios[0]!;
  assert.equal(regularDurationNs(read('ramping-vus')), 2e9);
  assert.equal(maxDurationNs(read('ramping-vus')), 42e9, 'gracefulRampDown 40s outlasts gracefulStop 30s');
  assert.equal(maxDurationNs(read('constant-vus')), 32e9);
  assert.equal(regularDurationNs(read('shared-iterations')), 600e9, "k6's default maxDuration");
});

test('arrival plans: rates per second, the rate 100 ms in, and starts from the plan', () => {
  const [car, rar] = consolidateOptions({
    scenarios: {
      car: {
        executor: 'constant-arrival-rate',
        rate: 30,
        timeUnit: '1m',
        duration: '2s',
        preAllocatedVUs: 1,
      },
      rar: {
        executor: 'ramping-arrival-rate',
        startRate: 0,
        preAllocatedVUs: 1,
        stages: [{ duration: '1s', target: 100 }],
      },
    },
  }).scenarios;
  const carPlan = arrivalPlan(car!)!;
  assert.equal(carPlan.peakRate(car!), 0.5, '30 per minute');
  const rarPlan = arrivalPlan(rar!)!;
  assert.equal(rarPlan.peakRate(rar!), 100);
  assert.equal(rarPlan.rateAt(rar!, 100e6), 10, 'a tenth of the way up the ramp');
  const starts = [...rarPlan.starts(rar!, ExecutionTuple.create())];
  assert.equal(starts.length, 49, 'the area under the ramp is 50; the 50th falls at its very end, not run');
});

test('an unknown executor is a problem naming every executor the engine runs', () => {
  try {
    consolidateOptions({ scenarios: { s: { executor: 'externally-controlled' } } });
    assert.fail('accepted');
  } catch (error) {
    assert.ok(error instanceof PlateauError);
    const problem = error.problems.find((p) => p.setting === 'scenarios.s.executor');
    assert.ok(problem);
    assert.match(problem.message, /"externally-controlled" is not an executor/);
    for (const name of EXECUTOR_NAMES) assert.ok(problem.hint.includes(name), name);
  }
});
