import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  breakpointOptions,
  breakpointStepAt,
  capacityOptions,
  concurrencyOptions,
  concurrencyStepAt,
  constantRateOptions,
  readBreakpointSettings,
  readCapacitySettings,
  readConcurrencySettings,
  readConstantRateSettings,
  requestUrl,
  retryDelaySeconds,
} from './profiles.ts';
import { SettingsError } from './settings.ts';

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof SettingsError) return [...error.problems];
    throw error;
  }
  return [];
}

test('capacity defaults: the documented ramp, VUs and objectives', () => {
  const s = readCapacitySettings({});
  assert.deepEqual(s.plan.ratesPerSec, [20, 40, 60, 70, 80, 90, 110]);
  assert.equal(s.plan.holdSeconds, 20);
  assert.equal(s.plan.rampSeconds, 2);
  assert.equal(s.plan.recoveryRatePerSec, 50);
  assert.equal(s.plan.recoverySeconds, 40);
  assert.equal(s.jitterSeconds, 0);
  assert.equal(s.preAllocatedVUs, 50);
  assert.equal(s.maxVUs, 1500);
  assert.deepEqual(s.objectives, { p95Ms: 250, failRate: 0.01 });
  assert.equal(s.baseUrl, 'http://127.0.0.1:3366');
  assert.equal(s.endpoint, '/statement');
  assert.equal(s.accounts, 5000);
  assert.equal(s.timeoutSeconds, 60);
});

test('capacity options: ramping-arrival-rate, every step plus drain and recovery gets both thresholds', () => {
  const options = capacityOptions(
    readCapacitySettings({ STEPS: '10,30', HOLD: '5', RAMP: '1', RECOVERY: '6' }),
  );
  const scenario = options.scenarios?.capacity as unknown as Record<string, unknown>;
  assert.equal(scenario.executor, 'ramping-arrival-rate');
  assert.equal(scenario.timeUnit, '1s');
  assert.equal(scenario.startRate, 0);
  assert.deepEqual(scenario.stages, [
    { duration: '1s', target: 10 },
    { duration: '4s', target: 10 },
    { duration: '1s', target: 30 },
    { duration: '4s', target: 30 },
    { duration: '1s', target: 50 },
    { duration: '5s', target: 50 },
  ]);
  const thresholds = options.thresholds as Record<string, string[]>;
  assert.deepEqual(thresholds.dropped_iterations, ['count==0']);
  for (const tag of ['r010', 'r030', 'drain', 'recovery']) {
    assert.deepEqual(thresholds[`http_req_duration{step:${tag}}`], ['p(95)<250'], tag);
    assert.deepEqual(thresholds[`http_req_failed{step:${tag}}`], ['rate<0.01'], tag);
  }
  assert.equal(Object.keys(thresholds).length, 1 + 2 * 4);
  assert.equal(options.discardResponseBodies, true);
  assert.deepEqual(options.summaryTrendStats, ['med', 'p(95)', 'p(99)', 'max']);
});

test('capacity with repeats and the probe: a tag and thresholds for each run of a rate, STEP_PREFIX p for the probe', () => {
  const repeated = readCapacitySettings({ STEPS: '10,30,50,10,30', HOLD: '5', RAMP: '1', RECOVERY: '6' });
  const thresholds = capacityOptions(repeated).thresholds as Record<string, string[]>;
  for (const tag of ['r010', 'r030', 'r050', 'r010b', 'r030b'])
    assert.deepEqual(thresholds[`http_req_duration{step:${tag}}`], ['p(95)<250'], tag);
  // The ramp from 50 back down to the repeat of 10 is a stage like any other.
  const stages =
    (capacityOptions(repeated).scenarios?.capacity as unknown as { stages: unknown[] } | undefined)?.stages ??
    [];
  assert.deepEqual(stages.slice(6, 8), [
    { duration: '1s', target: 10 },
    { duration: '4s', target: 10 },
  ]);
  const probe = readCapacitySettings({
    STEPS: '2,4,8',
    STEP_PREFIX: 'p',
    HOLD: '3',
    RAMP: '1',
    RECOVERY: '4',
  });
  assert.ok('http_req_duration{step:p008}' in (capacityOptions(probe).thresholds as object));
  assert.deepEqual(
    problemsOf(() => readCapacitySettings({ STEP_PREFIX: 'x' })).map((p) => p.split(':')[0]),
    ['STEP_PREFIX'],
  );
});

test('bad capacity settings are all named at once', () => {
  const problems = problemsOf(() =>
    readCapacitySettings({
      STEPS: '40,20',
      HOLD: '2',
      RAMP: '3',
      JITTER: '-1',
      MAX_VUS: '10',
      PREALLOCATED_VUS: 'x',
      P95_MS: 'fast',
    }),
  );
  const names = problems.map((p) => p.split(':')[0]);
  assert.deepEqual(names.sort(), ['HOLD', 'JITTER', 'MAX_VUS', 'P95_MS', 'PREALLOCATED_VUS', 'STEPS'].sort());
  assert.match(problems.find((p) => p.startsWith('HOLD'))!, /not longer than RAMP/);
  assert.match(problems.find((p) => p.startsWith('MAX_VUS'))!, /below PREALLOCATED_VUS/);
});

test('constant rate: constant-arrival-rate at RATE for DURATION with the three gates', () => {
  const options = constantRateOptions(
    readConstantRateSettings({ RATE: '35', DURATION: '45s', P95_MS: '300' }),
  );
  const scenario = options.scenarios?.check as unknown as Record<string, unknown>;
  assert.equal(scenario.executor, 'constant-arrival-rate');
  assert.equal(scenario.rate, 35);
  assert.equal(scenario.duration, '45s');
  assert.deepEqual(options.thresholds, {
    dropped_iterations: ['count==0'],
    http_req_duration: ['p(95)<300'],
    http_req_failed: ['rate<0.01'],
  });
  assert.deepEqual(
    problemsOf(() => readConstantRateSettings({ RATE: '0' })).map((p) => p.split(':')[0]),
    ['RATE'],
  );
});

test('breakpoint: a continuous ramp with abortOnFail thresholds, tagged by rate bucket', () => {
  const s = readBreakpointSettings({ START: '10', END: '110', DURATION: '100', BUCKET: '10' });
  const options = breakpointOptions(s);
  const scenario = options.scenarios?.breakpoint as unknown as Record<string, unknown>;
  assert.equal(scenario.startRate, 10);
  assert.deepEqual(scenario.stages, [{ duration: '100s', target: 110 }]);
  const thresholds = options.thresholds as Record<string, { abortOnFail: boolean }[]>;
  assert.equal(thresholds.http_req_duration?.[0]?.abortOnFail, true);
  assert.equal(thresholds.http_req_failed?.[0]?.abortOnFail, true);
  const cases: [number, string][] = [
    [0, 'r010'], // 10/s at the start
    [4.9, 'r010'], // 14.9/s rounds to 10
    [5, 'r020'], // 15/s rounds to 20
    [50, 'r060'],
    [100, 'r110'],
    [130, 'r110'], // after the end: still the end rate
  ];
  for (const [t, tag] of cases) assert.equal(breakpointStepAt(t, s), tag, `t=${t}`);
  assert.deepEqual(
    problemsOf(() => readBreakpointSettings({ START: '50', END: '40' })).map((p) => p.split(':')[0]),
    ['END'],
  );
});

test('concurrency: ramping-vus steps through the levels, tagged c002, c004, …', () => {
  const s = readConcurrencySettings({ VUS_LEVELS: '2,4,8', HOLD: '10' });
  const options = concurrencyOptions(s);
  const scenario = options.scenarios?.concurrency as unknown as Record<string, unknown>;
  assert.equal(scenario.executor, 'ramping-vus');
  assert.equal(scenario.startVUs, 2);
  assert.deepEqual(scenario.stages, [
    { duration: '1s', target: 2 },
    { duration: '9s', target: 2 },
    { duration: '1s', target: 4 },
    { duration: '9s', target: 4 },
    { duration: '1s', target: 8 },
    { duration: '9s', target: 8 },
  ]);
  assert.equal(concurrencyStepAt(0, s), 'c002');
  assert.equal(concurrencyStepAt(9.99, s), 'c002');
  assert.equal(concurrencyStepAt(10, s), 'c004');
  assert.equal(concurrencyStepAt(25, s), 'c008');
  assert.equal(concurrencyStepAt(99, s), 'c008');
  assert.deepEqual(
    problemsOf(() => readConcurrencySettings({ VUS_LEVELS: '2,2.5' })).map((p) => p.split(':')[0]),
    ['VUS_LEVELS'],
  );
});

test('concurrency: a recovery at fewer clients follows the levels, tagged recovery', () => {
  const s = readConcurrencySettings({
    VUS_LEVELS: '2,8',
    HOLD: '10',
    RECOVERY_VUS: '2',
    RECOVERY: '15',
    RETRIES: '3',
  });
  assert.equal(s.retries, 3);
  const scenario = concurrencyOptions(s).scenarios?.concurrency as unknown as { stages: unknown[] };
  // Down to 2 clients within a second, then held: not a 15 s linear ramp from 8.
  assert.deepEqual(scenario.stages.slice(-2), [
    { duration: '1s', target: 2 },
    { duration: '14s', target: 2 },
  ]);
  assert.equal(concurrencyStepAt(19.9, s), 'c008');
  assert.equal(concurrencyStepAt(20, s), 'recovery');
  assert.equal(concurrencyStepAt(99, s), 'recovery');
  // Without RECOVERY_VUS nothing follows the last level (the default).
  const plain = readConcurrencySettings({ VUS_LEVELS: '2,8', HOLD: '10' });
  assert.equal(plain.recoveryVus, 0);
  assert.equal(
    (concurrencyOptions(plain).scenarios!.concurrency as unknown as { stages: unknown[] }).stages.length,
    4,
  );
  assert.deepEqual(
    problemsOf(() => readConcurrencySettings({ RETRIES: '11' })).map((p) => p.split(':')[0]),
    ['RETRIES'],
  );
});

test('retries: Retry-After is honoured, other failures back off with jitter, successes and 4xx are final', () => {
  const cases: [
    attempt: number,
    status: number,
    retryAfter: string | undefined,
    random: number,
    wait: number | null,
  ][] = [
    [1, 200, undefined, 0.5, null], // a success is not retried
    [1, 404, undefined, 0.5, null], // neither is a request the service will refuse again
    [1, 503, '1', 0, 1], // the service said when it has room
    [1, 503, '1', 0.5, 1.25], // … and up to half as long again, so refused clients spread out
    [3, 429, '2', 1, 3], // Retry-After wins over the backoff however late the attempt
    [1, 503, undefined, 1, 0.05], // a 503 without the header backs off: 50 ms × 2^0
    [1, 0, undefined, 0.5, 0.025], // a timeout: half of 50 ms
    [3, 504, undefined, 1, 0.2], // third attempt: 50 ms × 2^2
    [9, 0, undefined, 1, 1], // capped at 1 s
    [2, 503, 'Wed, 21 Oct 2026 07:28:00 GMT', 1, 0.1], // an HTTP date is not read: backoff
  ];
  for (const [attempt, status, retryAfter, random, wait] of cases) {
    assert.equal(
      retryDelaySeconds(attempt, status, retryAfter, random),
      wait,
      `${attempt} ${status} ${retryAfter}`,
    );
  }
});

test('request URLs carry the account; ENDPOINT and BASE_URL are validated', () => {
  const s = readConstantRateSettings({ BASE_URL: 'http://127.0.0.1:4000/', ENDPOINT: '/statement' });
  assert.equal(requestUrl(s, 7), 'http://127.0.0.1:4000/statement?account=7');
  const q = readConstantRateSettings({ ENDPOINT: '/statement?format=json' });
  assert.equal(requestUrl(q, 7), 'http://127.0.0.1:3366/statement?format=json&account=7');
  const problems = problemsOf(() =>
    readConstantRateSettings({ BASE_URL: 'localhost:3366', ENDPOINT: 'statement' }),
  );
  assert.deepEqual(problems.map((p) => p.split(':')[0]).sort(), ['BASE_URL', 'ENDPOINT']);
});

test("the study's own request: METHOD, HEADERS, BODY_FILE, EXPECT_STATUS, and no account parameter with ACCOUNTS=0", () => {
  const s = readConstantRateSettings({
    BASE_URL: 'http://127.0.0.1:8080',
    ENDPOINT: '/api/orders',
    METHOD: 'post',
    HEADERS: '{"Content-Type":"application/json","X-Team":"payments"}',
    BODY_FILE: '/tmp/order.json',
    EXPECT_STATUS: '201,400-409',
    ACCOUNTS: '0',
  });
  assert.equal(s.method, 'POST');
  assert.deepEqual(s.headers, { 'Content-Type': 'application/json', 'X-Team': 'payments' });
  assert.equal(s.bodyFile, '/tmp/order.json');
  assert.deepEqual(s.expectStatus, [201, { min: 400, max: 409 }]);
  assert.equal(requestUrl(s, 7), 'http://127.0.0.1:8080/api/orders');
  const reference = readConstantRateSettings({});
  assert.equal(reference.method, 'GET');
  assert.equal(reference.expectStatus, undefined, "k6's default 200-399");
  assert.equal(requestUrl(reference, 7), 'http://127.0.0.1:3366/statement?account=7');
});

test('a bad METHOD, HEADERS or EXPECT_STATUS names the variable and the form', () => {
  const problems = problemsOf(() =>
    readConstantRateSettings({ METHOD: 'FETCH', HEADERS: '{"a":1}', EXPECT_STATUS: '2xx' }),
  );
  assert.equal(problems.length, 3);
  assert.match(problems.join('\n'), /METHOD.*FETCH.*GET, HEAD, POST/);
  assert.match(problems.join('\n'), /HEADERS.*JSON object of strings/);
  assert.match(problems.join('\n'), /EXPECT_STATUS.*200-299/);
});
