// The embedded engine's executors against a real HTTP server: starts, drops, VU growth,
// graceful stop, and the samples each leaves behind. Starts are judged against the clock at
// rates the generator must hold, so this file runs with nothing beside it.
// test-run: solo
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runScript, writeScript } from './helpers/engine.ts';
import { startTestServer } from './helpers/test-server.ts';

const request = (url: string, extra = '') => `
import http from 'k6/http';
import exec from 'k6/execution';
export default async function () {
  await http.asyncRequest('GET', '${url}/?i=' + exec.scenario.iterationInTest, null, { tags: { kind: 'probe' }${extra} });
}`;

test('constant-arrival-rate: rate × duration starts, none dropped, each request tagged', async () => {
  const server = await startTestServer();
  const script = await writeScript(`${request(server.url)}
export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 40, duration: '1s', preAllocatedVUs: 5 } } };`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  assert.equal(server.requests.length, 40, 'starts at 0, 25 ms, …, 975 ms');
  const reqs = run.rows.filter((r) => r.metric_name === 'http_reqs');
  assert.equal(reqs.length, 40);
  for (const row of reqs) {
    assert.equal(row.scenario, 'car');
    assert.equal(row.status, '200');
    assert.equal(row.extra_tags, 'kind=probe');
    assert.equal(row.expected_response, 'true');
  }
  assert.equal(run.rows.filter((r) => r.metric_name === 'iterations').length, 40);
  assert.equal(run.rows.filter((r) => r.metric_name === 'dropped_iterations').length, 0);
  const seen = server.requests
    .map((r) => Number(new URL(r.url, 'http://x').searchParams.get('i')))
    .sort((a, b) => a - b);
  assert.deepEqual(
    seen,
    Array.from({ length: 40 }, (_, i) => i),
    'iterationInTest 0…39, each once',
  );
  // Starts are spread evenly: no 100 ms window holds more than twice its share.
  const origin = server.requests[0]!.atMs;
  const windows = new Map<number, number>();
  for (const r of server.requests)
    windows.set(
      Math.floor((r.atMs - origin) / 100),
      (windows.get(Math.floor((r.atMs - origin) / 100)) ?? 0) + 1,
    );
  assert.ok(Math.max(...windows.values()) <= 8, `evenly paced: ${[...windows.values()].join(',')}`);
});

test('too few VUs for a slow server: starts are dropped, VUs grow to maxVUs, one warning', async () => {
  const server = await startTestServer({ delayMs: 600 });
  const script = await writeScript(`${request(server.url)}
export const options = { scenarios: { slow: { executor: 'constant-arrival-rate', rate: 20, duration: '1s', preAllocatedVUs: 1, maxVUs: 3, gracefulStop: '2s' } } };`);
  const run = await runScript(script);
  const dropped = run.rows.filter((r) => r.metric_name === 'dropped_iterations');
  // 3 VUs each busy 600 ms can take at most 6 of the 20 starts (k6 does not retry drops).
  assert.ok(dropped.length >= 14, `dropped ${dropped.length} of 20`);
  for (const row of dropped) {
    assert.equal(row.scenario, 'slow', 'dropped_iterations carries the scenario');
    assert.equal(row.extra_tags, '', 'but not the scenario tags');
  }
  assert.equal(server.requests.length + dropped.length, 20, 'every planned start ran or was dropped');
  const starts = server.requests.map((r) => r.atMs);
  const concurrent = Math.max(...starts.map((t) => starts.filter((u) => u >= t - 590 && u <= t).length));
  assert.ok(concurrent <= 3, `never more than maxVUs in flight (${concurrent})`);
  const vusMax = run.exported?.metrics.vus_max as { max: number };
  assert.equal(vusMax.max, 3, 'VUs initialised up to maxVUs');
  const warnings = run.logs.filter((l) =>
    l.includes('Insufficient VUs, reached 3 active VUs and cannot initialize more'),
  );
  assert.equal(warnings.length, 1);
});

test('gracefulStop: iterations still running are interrupted and emit no iterations sample', async () => {
  // The server answers nothing for 30 s: a run that waited for its requests would end after
  // the answers; one that cut them ends with none sent.
  let answered = 0;
  const server = await startTestServer({
    handle: (_req, res) => {
      setTimeout(() => {
        answered++;
        res.end('late');
      }, 30_000).unref();
    },
  });
  const script = await writeScript(`${request(server.url)}
export const options = { scenarios: { stuck: { executor: 'constant-arrival-rate', rate: 2, duration: '1s', preAllocatedVUs: 2, gracefulStop: '300ms' } } };`);
  const run = await runScript(script);
  assert.ok(server.requests.length > 0, 'the iterations sent their requests');
  assert.equal(answered, 0, 'did not wait for the server');
  assert.equal(run.exitCode, 0);
  assert.equal(run.rows.filter((r) => r.metric_name === 'iterations').length, 0);
  assert.equal(
    run.rows.filter((r) => r.metric_name === 'http_reqs').length,
    0,
    'the cut requests leave no samples',
  );
  assert.equal(
    run.rows.filter((r) => r.metric_name === 'data_sent').length,
    2,
    'data samples still close each iteration',
  );
});

test('ramping-arrival-rate: k6 start times (first at 1/rate) reach the server', async () => {
  const server = await startTestServer();
  const script = await writeScript(`${request(server.url)}
export const options = { scenarios: { ramp: { executor: 'ramping-arrival-rate', startRate: 10, preAllocatedVUs: 5, stages: [{ duration: '1s', target: 10 }, { duration: '1s', target: 30 }] } } };`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  // 1 s at 10/s (10 starts, the one at 1 s is interior) + 1 s from 10 to 30/s (20, the last at 2 s excluded)
  assert.equal(server.requests.length, 10 + 19);
});

test('constant-vus, per-vu-iterations and shared-iterations run their VUs and iterations', async () => {
  const server = await startTestServer({ delayMs: 20 });
  const script = await writeScript(`${request(server.url)}
export const options = { scenarios: {
  perVu: { executor: 'per-vu-iterations', vus: 3, iterations: 4 },
  shared: { executor: 'shared-iterations', vus: 2, iterations: 7 },
  loop: { executor: 'constant-vus', vus: 2, duration: '1s', startTime: '200ms' },
} };`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const count = (scenario: string) =>
    run.rows.filter((r) => r.metric_name === 'iterations' && r.scenario === scenario).length;
  assert.equal(count('perVu'), 12);
  assert.equal(count('shared'), 7);
  const loops = count('loop');
  assert.ok(loops >= 20 && loops <= 110, `2 VUs looping on a 20 ms server for 1 s: ${loops}`);
});

test('ramping-vus follows its stages and ramps down', async () => {
  const server = await startTestServer({ delayMs: 50 });
  const script = await writeScript(`
import http from 'k6/http';
import exec from 'k6/execution';
export default async function () {
  await http.asyncRequest('GET', '${server.url}/?vu=' + exec.vu.idInInstance);
}
export const options = { scenarios: { rv: { executor: 'ramping-vus', startVUs: 1, gracefulRampDown: '0s',
  stages: [{ duration: '600ms', target: 4 }, { duration: '600ms', target: 4 }, { duration: '0s', target: 1 }, { duration: '400ms', target: 1 }] } } };`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const vus = new Set(server.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('vu')));
  assert.deepEqual([...vus].sort(), ['1', '2', '3', '4']);
  const last = server.requests.filter((r) => r.atMs > server.requests[0]!.atMs + 1300);
  assert.ok(last.length > 0);
  assert.ok(
    last.every((r) => new URL(r.url, 'http://x').searchParams.get('vu') === '1'),
    'after the drop to 1 VU only VU 1 sends',
  );
});

test('a high-rate test is rehearsed against a local sink first; nothing of it reaches the target or the outputs', async () => {
  const server = await startTestServer();
  const script = await writeScript(`${request(server.url)}
export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 1000, duration: '1s', preAllocatedVUs: 50, maxVUs: 200 } } };`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const warming = run.logs.findIndex((line) => line.includes('warming up: rehearsing up to 1,000/s'));
  assert.ok(warming >= 0, `the rehearsal is announced before it runs: ${run.logs.join('\n')}`);
  const warmed = run.logs.find((line) => line.includes('warmed up'));
  assert.ok(warmed, `the rehearsal is announced: ${run.logs.join('\n')}`);
  const rehearsed = Number(/warmed up: (\d+) rehearsal iterations/.exec(warmed)?.[1]);
  assert.ok(rehearsed >= 500, `the rehearsal ran at the test's rate: ${warmed}`);
  // The script's own starts, and only those, reached the target and the outputs.
  const dropped = Number(run.exported?.metrics.dropped_iterations?.count ?? 0);
  assert.equal(server.requests.length + dropped, 1000);
  assert.ok(server.requests.every((r) => r.url.startsWith('/?i=')));
  const reqs = run.rows.filter((r) => r.metric_name === 'http_reqs');
  assert.equal(reqs.length, server.requests.length);
  assert.ok(reqs.every((r) => r.url?.startsWith(server.url) && r.scenario === 'car'));
  assert.equal(run.exported?.metrics.iterations?.count, server.requests.length);
  assert.ok(!run.rows.some((r) => r.scenario === 'warm-up' || r.url?.includes('/warm-up')));

  const cold = await runScript(script, { warmUp: false });
  assert.equal(cold.exitCode, 0);
  assert.ok(!cold.logs.some((line) => line.includes('warmed up')), '--no-warm-up skips it');

  // Half of a 1,000/s test is 500/s for this process: below the rehearsal's threshold.
  const half = await runScript(script, {
    overrides: { executionSegment: '0:1/2', executionSegmentSequence: '0,1/2,1' },
  });
  assert.equal(half.exitCode, 0, half.logs.join('\n'));
  assert.ok(!half.logs.some((line) => line.includes('warmed up')), 'a segment is judged by its own share');
});

test('one VU pool for all scenarios, as in k6: a later scenario runs on the VUs an earlier one gave back', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
import exec from 'k6/execution';
export const options = { scenarios: {
  first: { executor: 'constant-vus', vus: 3, duration: '1s', gracefulStop: '0s' },
  second: { executor: 'per-vu-iterations', vus: 3, iterations: 2, startTime: '1200ms' },
  beside: { executor: 'shared-iterations', vus: 2, iterations: 2, startTime: '1300ms' },
} };
export default async function () {
  await http.asyncRequest('GET', '${server.url}/?s=' + exec.scenario.name + '&vu=' + __VU);
  await new Promise((resolve) => setTimeout(resolve, 50));
}`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const vusOf = (scenario: string) =>
    [
      ...new Set(
        server.requests
          .map((r) => new URL(r.url, 'http://x').searchParams)
          .filter((q) => q.get('s') === scenario)
          .map((q) => Number(q.get('vu'))),
      ),
    ].sort((a, b) => a - b);
  // The plan needs 5 VUs at once (second and beside overlap), so 5 exist before the test.
  // first takes VUs 1-3 and gives them back; second and beside take the free ones, oldest
  // first (4, 5, then 1, 2, 3 in the order first returned them), as k6's pool channel does.
  assert.deepEqual(vusOf('first'), [1, 2, 3]);
  assert.deepEqual(vusOf('second'), [1, 4, 5], 'VUs 4, 5 and one that first gave back, not new ones');
  assert.deepEqual(vusOf('beside'), [2, 3]);
  const vusMax = run.rows.filter((r) => r.metric_name === 'vus_max').map((r) => Number(r.metric_value));
  assert.ok(vusMax.length > 0);
  assert.ok(
    vusMax.every((v) => v === 5),
    `vus_max is the plan's most VUs at once from the first sample: ${vusMax}`,
  );
});

test('exec.vu.iterationInScenario counts each VU’s own iterations; exec.scenario.iterationInInstance the scenario’s', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
import exec from 'k6/execution';
export const options = { scenarios: {
  // a's plan ends (maxDuration, no gracefulStop) when b starts: b takes a's VUs back.
  a: { executor: 'per-vu-iterations', vus: 2, iterations: 3, maxDuration: '1s', gracefulStop: '0s' },
  b: { executor: 'per-vu-iterations', vus: 2, iterations: 2, startTime: '1s' },
} };
export default async function () {
  const q = [exec.scenario.name, exec.vu.idInInstance, exec.vu.iterationInScenario, exec.vu.iterationInInstance, exec.scenario.iterationInInstance, __ITER];
  await http.asyncRequest('GET', '${server.url}/?q=' + q.join(','));
}`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const rows = server.requests.map((r) => {
    const [scenario, vu, vuInScenario, vuInInstance, scenarioInInstance, iter] = new URL(
      r.url,
      'http://x',
    ).searchParams
      .get('q')!
      .split(',');
    return {
      scenario,
      vu: Number(vu),
      vuInScenario: Number(vuInScenario),
      vuInInstance: Number(vuInInstance),
      scenarioInInstance: Number(scenarioInInstance),
      iter: Number(iter),
    };
  });
  const seq = (scenario: string, vu: number, key: 'vuInScenario' | 'vuInInstance') =>
    rows
      .filter((r) => r.scenario === scenario && r.vu === vu)
      .map((r) => r[key])
      .sort((x, y) => x - y);
  for (const vu of [1, 2]) {
    assert.deepEqual(seq('a', vu, 'vuInInstance'), [0, 1, 2], `VU ${vu} numbers its iterations from 0`);
    assert.deepEqual(seq('a', vu, 'vuInScenario'), [0, 1, 2], `VU ${vu} counts its own iterations in a`);
    assert.deepEqual(seq('b', vu, 'vuInScenario'), [0, 1], `and starts over in b`);
    assert.deepEqual(seq('b', vu, 'vuInInstance'), [3, 4], 'while its count across scenarios goes on');
  }
  assert.ok(
    rows.every((r) => r.iter === r.vuInInstance),
    '__ITER is the VU’s iteration number, as exec.vu.iterationInInstance',
  );
  const scenarioWide = rows
    .filter((r) => r.scenario === 'a')
    .map((r) => r.scenarioInInstance)
    .sort((x, y) => x - y);
  assert.deepEqual(scenarioWide, [0, 1, 2, 3, 4, 5], 'the scenario counts all its iterations once each');
});

test('a scenario at more than 5,000/s from its first moment is warned about before the clock, with the fix', async () => {
  // Each iteration aborts the test: the warning comes before the clock, so no load is needed.
  const script = await writeScript(`
import exec from 'k6/execution';
export const options = { scenarios: {
  cold: { executor: 'constant-arrival-rate', rate: 8000, duration: '5s', preAllocatedVUs: 20, maxVUs: 20 },
  ramped: { executor: 'ramping-arrival-rate', startRate: 0, stages: [{ duration: '1s', target: 8000 }], preAllocatedVUs: 20, maxVUs: 20 },
} };
export default function () { exec.test.abort('enough'); }`);
  const run = await runScript(script, { warmUp: false });
  assert.equal(run.exitCode, 108, run.logs.join('\n'));
  const warnings = run.logs.filter(
    (line) => line.startsWith('warning') && line.includes('within 100 ms of its start'),
  );
  assert.equal(warnings.length, 1, run.logs.join('\n'));
  assert.match(warnings[0]!, /scenario "cold" is at 8,000 iterations\/s/);
});
