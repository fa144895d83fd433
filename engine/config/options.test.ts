import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPlateauError } from '../../contract/index.ts';
import { consolidateOptions } from './options.ts';

test('no options: one default shared-iterations scenario with 1 VU and 1 iteration', () => {
  const options = consolidateOptions(undefined);
  assert.deepEqual(
    options.scenarios.map((s) => [s.name, s.executor]),
    [['default', 'shared-iterations']],
  );
  assert.deepEqual(options.summaryTrendStats, ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)']);
});

test('shortcuts become scenarios: duration → constant-vus, stages → ramping-vus, iterations → shared', () => {
  assert.equal(consolidateOptions({ vus: 3, duration: '10s' }).scenarios[0]?.executor, 'constant-vus');
  assert.equal(
    consolidateOptions({ stages: [{ duration: '5s', target: 2 }] }).scenarios[0]?.executor,
    'ramping-vus',
  );
  assert.equal(consolidateOptions({ vus: 2, iterations: 10 }).scenarios[0]?.executor, 'shared-iterations');
});

test('scenario defaults follow k6: gracefulStop 30s, exec default, timeUnit 1s, maxVUs = preAllocatedVUs', () => {
  const [s] = consolidateOptions({
    scenarios: {
      ramp: {
        executor: 'ramping-arrival-rate',
        preAllocatedVUs: 5,
        stages: [{ duration: '2s', target: 10 }],
      },
    },
  }).scenarios;
  assert.ok(s?.executor === 'ramping-arrival-rate');
  assert.equal(s.gracefulStopNs, 30e9);
  assert.equal(s.exec, 'default');
  assert.equal(s.timeUnitNs, 1e9);
  assert.equal(s.maxVUs, 5);
  assert.equal(s.startRate, 0);
});

test('every invalid option is reported at once', () => {
  assert.throws(
    () =>
      consolidateOptions({
        scenarios: {
          'bad name!': { executor: 'constant-vus', duration: '10s' },
          car: {
            executor: 'constant-arrival-rate',
            rate: 0,
            duration: '500ms',
            preAllocatedVUs: 5,
            maxVUs: 2,
          },
          x: { executor: 'externally-controlled' },
        },
        summaryTrendStats: ['p(101)'],
      }),
    (error: unknown) => {
      assert.ok(isPlateauError(error));
      const settings = error.problems.map((p) => p.setting);
      for (const expected of [
        'scenarios.bad name!',
        'scenarios.car.rate',
        'scenarios.car.duration',
        'scenarios.car.maxVUs',
        'scenarios.x.executor',
        'summaryTrendStats',
      ]) {
        assert.ok(settings.includes(expected), `${expected} in ${settings.join(', ')}`);
      }
      return true;
    },
  );
});

test('command-line overrides win: trend stats, tags, no thresholds, segments', () => {
  const options = consolidateOptions(
    { tags: { a: '1' }, thresholds: { http_reqs: ['count>0'] }, summaryTrendStats: ['avg'] },
    { summaryTrendStats: ['p(99)'], tags: { b: '2' }, noThresholds: true, executionSegment: '0:1/2' },
  );
  assert.deepEqual(options.summaryTrendStats, ['p(99)']);
  assert.deepEqual(options.tags, { a: '1', b: '2' });
  assert.deepEqual(options.thresholds, {});
  assert.equal(options.executionSegment, '0:1/2');
});

test('command-line shortcuts outrank the script: --duration/--iterations/--stage replace its scenarios', () => {
  const script = {
    vus: 3,
    iterations: 50,
    scenarios: { car: { executor: 'constant-arrival-rate', rate: 10, duration: '1m', preAllocatedVUs: 2 } },
  };
  const byDuration = consolidateOptions(script, { shortcuts: { duration: '30s' } });
  assert.deepEqual(
    byDuration.scenarios.map((s) => [s.name, s.executor, 'vus' in s ? s.vus : undefined]),
    [['default', 'constant-vus', 3]],
    "the script's vus still sizes it; its iterations do not mix in",
  );
  const byIterations = consolidateOptions(script, { shortcuts: { vus: 2, iterations: 5 } });
  const shared = byIterations.scenarios[0]!;
  assert.equal(shared.executor, 'shared-iterations');
  assert.ok(shared.executor === 'shared-iterations' && shared.vus === 2 && shared.iterations === 5);
  const byStages = consolidateOptions(script, {
    shortcuts: {
      stages: [
        { duration: '10s', target: 4 },
        { duration: '5s', target: 0 },
      ],
    },
  });
  assert.equal(byStages.scenarios[0]!.executor, 'ramping-vus');
  // --vus alone does not replace scenarios (k6 ignores it then).
  assert.deepEqual(
    consolidateOptions(script, { shortcuts: { vus: 9 } }).scenarios.map((s) => s.name),
    ['car'],
  );
  // Without scenarios in the script, --vus sizes the script's own shortcut.
  const own = consolidateOptions({ duration: '10s' }, { shortcuts: { vus: 7 } }).scenarios[0]!;
  assert.ok(own.executor === 'constant-vus' && own.vus === 7);
});

test('rps, minIterationDuration, blocked destinations, summaryTimeUnit: parsed, and bad values named', () => {
  const options = consolidateOptions({
    rps: 50,
    minIterationDuration: '1.5s',
    blockHostnames: ['*.Example.com', 'internal.test'],
    blacklistIPs: ['10.0.0.0/8', 'fd00::/8'],
    summaryTimeUnit: 'ms',
    handleSummaryTimeout: '10s',
  });
  assert.equal(options.rps, 50);
  assert.equal(options.minIterationDurationMs, 1500);
  assert.deepEqual(options.blockHostnames, ['*.example.com', 'internal.test']);
  assert.deepEqual(options.blacklistIPs, ['10.0.0.0/8', 'fd00::/8']);
  assert.equal(options.summaryTimeUnit, 'ms');
  assert.equal(options.handleSummaryTimeoutNs, 10e9);
  const defaults = consolidateOptions({});
  assert.equal(defaults.rps, 0);
  assert.equal(defaults.minIterationDurationMs, 0);
  assert.equal(defaults.handleSummaryTimeoutNs, 120e9);
  assert.deepEqual(defaults.warnings, []);

  try {
    consolidateOptions({
      rps: -1,
      minIterationDuration: 'soon',
      blockHostnames: ['api.*.test', ''],
      blacklistIPs: ['10.0.0.1', '10.0.0.0/33', 'fd00::/129', 'x/8'],
      summaryTimeUnit: 'min',
    });
    assert.fail('bad options accepted');
  } catch (error) {
    assert.ok(isPlateauError(error));
    const settings = error.problems.map((p) => `${p.setting}: ${p.message}`);
    for (const expected of [
      /options\.rps: -1/,
      /options\.minIterationDuration: "soon" is not a duration/,
      /options\.blockHostnames: "api\.\*\.test" is not a hostname pattern/,
      /options\.blockHostnames: "" is not a hostname pattern/,
      /options\.blacklistIPs: "10\.0\.0\.1" is not a CIDR range/,
      /options\.blacklistIPs: "10\.0\.0\.0\/33"/,
      /options\.blacklistIPs: "fd00::\/129"/,
      /options\.blacklistIPs: "x\/8"/,
      /options\.summaryTimeUnit: "min"/,
    ]) {
      assert.ok(
        settings.some((s) => expected.test(s)),
        `${expected} in\n${settings.join('\n')}`,
      );
    }
  }
});
