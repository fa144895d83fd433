// k6 scripts as k6's documentation writes them (http.get, sleep(1), group, check, batch)
// run unchanged on the embedded engine, VU by VU, and what cannot be honoured fails at load.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { checkResults, runScript, writeScript } from './helpers/engine.ts';
import { startTestServer } from './helpers/test-server.ts';

test("a script in k6's documented blocking style: requests, think time, groups, checks, batch and custom metrics", async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
import { check, group, sleep } from 'k6';
import { Counter, Trend } from 'k6/metrics';
const logins = new Counter('logins');
const profileTime = new Trend('profile_time', true);
const BASE = '${server.url}';

function login(user) {
  const res = http.post(BASE + '/login', JSON.stringify({ user }), { headers: { 'Content-Type': 'application/json' } });
  logins.add(1);
  return res.status;
}
const api = {
  profile() {
    const res = http.get(BASE + '/profile');
    profileTime.add(res.timings.duration);
    return res;
  },
};
export const options = { vus: 2, iterations: 4 };
export default function () {
  group('login', () => {
    check(login('alice'), { 'logged in': (s) => s === 200 });
  });
  sleep(0.05);
  group('browse', function () {
    const res = api.profile();
    check(res, { 'profile 200': (r) => r.status === 200 });
    const [a, b] = http.batch([BASE + '/a', ['GET', BASE + '/b', null, { tags: { name: 'b' } }]]);
    check(a, { 'batch a': (r) => r.status === 200 });
    check(b, { 'batch b': (r) => r.status === 200 });
  });
  http.del(BASE + '/session');
}
`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const requests = run.rows.filter((r) => r.metric_name === 'http_reqs');
  assert.equal(requests.length, 4 * 5, 'five requests an iteration, none lost');
  assert.deepEqual(checkResults(run.rows), {
    'logged in': [4, 0],
    'profile 200': [4, 0],
    'batch a': [4, 0],
    'batch b': [4, 0],
  });
  const groupOf = (path: string) => requests.find((r) => r.url?.endsWith(path))?.group;
  assert.equal(groupOf('/login'), '::login');
  assert.equal(groupOf('/profile'), '::browse');
  assert.equal(groupOf('/session'), '', 'the request after the group is outside it');
  assert.equal(run.rows.filter((r) => r.metric_name === 'logins').length, 4);
  assert.equal(run.rows.filter((r) => r.metric_name === 'profile_time').length, 4);
  const groups = run.rows.filter((r) => r.metric_name === 'group_duration' && r.group === '::browse');
  assert.equal(groups.length, 4, 'group_duration once per iteration');
  assert.ok(groups.every((r) => Number(r.metric_value) > 0));
  // Each VU's requests in order: login, profile, the batch, then the delete.
  const order = server.requests.map((r) => r.url);
  assert.equal(order.filter((u) => u === '/session').length, 4);
  assert.ok(!run.logs.some((l) => l.includes('not awaited')), 'no un-awaited sleep was found');
});

test('sleep blocks only its own VU, and a VU waits for its sleep before its next request', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';
export const options = {
  scenarios: {
    sleeper: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'sleeper' },
    busy: { executor: 'constant-vus', vus: 1, duration: '3s', exec: 'busy' },
  },
};
export function sleeper() {
  http.get('${server.url}/before');
  sleep(0.6);
  http.get('${server.url}/after');
}
export function busy() {
  http.get('${server.url}/busy');
  sleep(0.05);
}
`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const at = (path: string) => server.requests.filter((r) => r.url === path).map((r) => r.atMs);
  const before = at('/before')[0]!;
  const after = at('/after')[0]!;
  assert.ok(
    after - before >= 590,
    `the sleeper's second request came ${Math.round(after - before)} ms after its first`,
  );
  // About eleven in the 600 ms; a sleep that blocked the engine would allow at most one. The
  // busy VU runs well past the sleep, and two are asked for, so that a start late by a second
  // or a stall of the saturated machine does not empty the window.
  const busyDuring = at('/busy').filter((t) => t > before && t < after);
  assert.ok(
    busyDuring.length >= 2,
    `the other VU kept going while one slept (${busyDuring.length} requests)`,
  );
});

test('module state is per VU, as each k6 VU has its own runtime; SharedArray and open() stay shared', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
import { SharedArray } from 'k6/data';
let counter = 0;
let loads = 0;
const users = new SharedArray('users', () => { loads++; return JSON.parse(open('./users.json')); });
export const options = { vus: 3, iterations: 9 };
export default function () {
  counter++;
  http.get('${server.url}/?vu=' + __VU + '&n=' + counter + '&user=' + users[__VU % users.length] + '&loads=' + loads);
}
`);
  await writeFile(join(dirname(script), 'users.json'), JSON.stringify(['ann', 'bob']));
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const seen = server.requests.map((r) => new URL(r.url, 'http://x').searchParams);
  const byVu = new Map<string, number[]>();
  for (const q of seen) byVu.set(q.get('vu')!, [...(byVu.get(q.get('vu')!) ?? []), Number(q.get('n'))]);
  assert.equal(byVu.size, 3);
  for (const [vu, counts] of byVu) {
    assert.deepEqual(
      counts,
      counts.map((_, i) => i + 1),
      `VU ${vu} counts its own iterations from 1`,
    );
  }
  assert.ok(seen.every((q) => ['ann', 'bob'].includes(q.get('user')!)));
  // The first instance (options) loaded the array; every VU's init got it without a load of its own.
  assert.ok(
    seen.every((q) => q.get('loads') === '0'),
    'VU instances reuse the shared array',
  );
});

test('helpers in another file and the async forms mix with the blocking ones', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
import { fetchTwice } from './helpers.js';
export const options = { iterations: 2 };
export default async function () {
  fetchTwice('${server.url}');
  await http.asyncRequest('GET', '${server.url}/async');
}
`);
  await writeFile(
    join(dirname(script), 'helpers.js'),
    `import http from 'k6/http';
export function fetchTwice(base) { http.get(base + '/one'); return http.get(base + '/two').status; }
`,
  );
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  assert.deepEqual(
    server.requests.map((r) => r.url),
    ['/one', '/two', '/async', '/one', '/two', '/async'],
    'one VU: each call in order',
  );
});

test('what the engine cannot wait for fails at load, naming the line and the way out (exit 107)', async () => {
  const cases: [string, RegExp][] = [
    [
      `import http from 'k6/http';
export default function () {
  ['a', 'b'].forEach((p) => http.get('http://127.0.0.1:1/' + p));
}`,
      /script\.js:3:\d+: a callback passed to \["a", "b"\]\.forEach\(\) makes blocking k6 calls.*for\.\.\.of/,
    ],
    [
      `import http from 'k6/http';
const fetch = http.get;
export default function () { fetch('http://127.0.0.1:1/'); }`,
      /script\.js:2:\d+: the k6\/http module is used here in a way the engine cannot follow/,
    ],
    [
      `import { get } from 'k6/http';
export default function () { ['x'].map(get); }`,
      /script\.js:2:\d+: get \(k6\/http\) is used as a value here/,
    ],
    [
      `import http from 'k6/http';
http.get('http://127.0.0.1:1/');
export default function () {}`,
      /script\.js:2:\d+: .*get\(\) in the init context/,
    ],
    [
      `import http from 'k6/http';
function call() { return http.get('http://127.0.0.1:1/'); }
const table = { call };
export default function () { table.call(); }`,
      /script\.js:3:\d+: call\(\) makes blocking k6 calls .* used here as a value/,
    ],
  ];
  for (const [source, expected] of cases) {
    const run = await runScript(await writeScript(source));
    assert.equal(run.exitCode, 107, source);
    assert.match(run.logs.join('\n'), expected, source);
  }
});
