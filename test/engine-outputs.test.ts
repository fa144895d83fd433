// The engine's files have the shape of real k6 output (../shared/fixtures/k6-real).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { EXIT_CODES } from '../contract/index.ts';
import { runScript, writeScript } from './helpers/engine.ts';
import { k6RealFixtures } from './helpers/shared-fixtures.ts';
import { startTestServer } from './helpers/test-server.ts';

const FIXTURES = k6RealFixtures();
const NEWEST_CSV = 'k6-v0.43_2023_csv_metadata-col_named-scenarios_quoted-checks.csv';

/** The tag columns a row fills, ignoring columns that depend on the target (TLS) or script. */
function shape(row: Record<string, string>): string {
  const ignored = new Set([
    'metric_name',
    'timestamp',
    'metric_value',
    'tls_version',
    'extra_tags',
    'name',
    'url',
  ]);
  return Object.entries(row)
    .filter(([k, v]) => !ignored.has(k) && v !== '')
    .map(([k]) => k)
    .sort()
    .join(',');
}

test("the CSV header and each metric's row shape match real k6's", async () => {
  const fixture = parse(await readFile(`${FIXTURES}${NEWEST_CSV}`), { columns: true }) as Record<
    string,
    string
  >[];
  const server = await startTestServer();
  const run = await runScript(
    await writeScript(`
import http from 'k6/http';
import { check } from 'k6';
export const options = { scenarios: { scenario1: { executor: 'per-vu-iterations', vus: 1, iterations: 2 } } };
export default async function () {
  const res = await http.asyncRequest('GET', '${server.url}/');
  check(res, { 'status is 200': (r) => r.status === 200 });
  await new Promise((r) => setTimeout(r, 1100)); // let vus/vus_max rows appear
}`),
  );
  const csv = (await import('node:zlib')).gunzipSync(await readFile(`${run.dir}/out.csv.gz`)).toString();
  const fixtureHeader = (await readFile(`${FIXTURES}${NEWEST_CSV}`, 'utf8')).split('\n')[0];
  assert.equal(csv.split('\n')[0], fixtureHeader, 'the 19-column header of k6 v0.41+');
  const compared = [
    'http_reqs',
    'http_req_duration',
    'http_req_failed',
    'checks',
    'iterations',
    'vus',
    'vus_max',
  ];
  for (const metric of compared) {
    const theirs = fixture.find(
      (r) => r.metric_name === metric && (r.scenario !== '' || metric.startsWith('vus')),
    );
    const ours = run.rows.find((r) => r.metric_name === metric);
    assert.ok(theirs && ours, `${metric} present in both`);
    assert.equal(shape(ours), shape(theirs), `${metric} fills the same tag columns`);
  }
  // Every row has all 19 fields, values with 6 decimals, integer-second timestamps.
  for (const line of csv.trim().split('\n').slice(1)) {
    const fields = parse(line)[0] as string[];
    assert.equal(fields.length, 19, line);
    assert.match(fields[1]!, /^\d{10}$/);
    assert.match(fields[2]!, /^-?\d+\.\d{6}$/);
  }
});

test('check names with quotes and commas are quoted like Go encoding/csv', async () => {
  const server = await startTestServer();
  const run = await runScript(
    await writeScript(`
import http from 'k6/http';
import { check } from 'k6';
export const options = { iterations: 1 };
export default async function () {
  const res = await http.asyncRequest('GET', '${server.url}/');
  check(res, { '"image" in body, maybe': () => true });
}`),
  );
  const csv = (await import('node:zlib')).gunzipSync(await readFile(`${run.dir}/out.csv.gz`)).toString();
  assert.ok(csv.includes('checks,'), 'a checks row');
  assert.ok(csv.includes('"""image"" in body, maybe"'), 'doubled quotes inside a quoted field');
  assert.equal(run.rows.find((r) => r.metric_name === 'checks')?.check, '"image" in body, maybe');
});

test("--out json writes k6 NDJSON: a Metric line before each metric's first Point", async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { iterations: 2, thresholds: { http_req_failed: [{ threshold: 'rate<0.01', abortOnFail: true }] } };
export default async function () { await http.asyncRequest('GET', '${server.url}/', null, { tags: { step: 'r010' } }); }`);
  const out = `${script}.ndjson`;
  const run = await runScript(script, { outputs: [{ type: 'json', arg: out }] });
  assert.equal(run.exitCode, 0);
  const lines = (await readFile(out, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const announced = new Set<string>();
  for (const line of lines) {
    if (line.type === 'Metric') {
      assert.deepEqual(Object.keys(line), ['type', 'data', 'metric']);
      announced.add(line.metric);
    } else {
      assert.deepEqual(Object.keys(line), ['metric', 'type', 'data']);
      assert.ok(announced.has(line.metric), `${line.metric} announced before its first point`);
      assert.deepEqual(Object.keys(line.data.tags), Object.keys(line.data.tags).sort(), 'tags sorted');
      assert.match(line.data.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/);
    }
  }
  const failed = lines.find((l) => l.type === 'Metric' && l.metric === 'http_req_failed');
  assert.deepEqual(failed.data.thresholds, [
    { threshold: 'rate<0.01', abortOnFail: true, delayAbortEval: null },
  ]);
  const reqs = lines.filter((l) => l.type === 'Point' && l.metric === 'http_reqs');
  assert.equal(reqs.length, 2);
  assert.equal(reqs[0].data.tags.step, 'r010');
});

test('an output whose disk is full stops the test with exit 124, says why, and the summary is still written', async () => {
  // /dev/full answers every write with ENOSPC: a real full disk without filling one.
  const script = await writeScript(`
export const options = { vus: 1, duration: '30s' };
export default async function () { await new Promise((r) => setTimeout(r, 10)); }`);
  const run = await runScript(script, { outputs: [{ type: 'csv', arg: '/dev/full' }] });
  assert.equal(run.exitCode, EXIT_CODES.outputFailed, run.reason);
  assert.match(
    run.reason,
    /the CSV output \/dev\/full cannot be written: no space left on the disk \(ENOSPC\)/,
  );
  assert.ok(
    run.logs.some((l) => l.startsWith('error the CSV output /dev/full cannot be written')),
    'logged as an error, with its hint',
  );
  assert.ok(run.exported, 'the summary export is written');
});

test('the summary export has the legacy shape real k6 writes', async () => {
  const real = JSON.parse(
    await readFile(`${FIXTURES}k6-v1.x_2026_summary-export_dropped-iterations_429_3-scenarios.json`, 'utf8'),
  );
  const server = await startTestServer();
  const run = await runScript(
    await writeScript(`
import http from 'k6/http';
export const options = { iterations: 3, thresholds: { http_req_duration: ['p(95)<50000'] } };
export default async function () { await http.asyncRequest('GET', '${server.url}/'); }`),
  );
  const ours = run.exported!;
  assert.deepEqual(Object.keys(ours).sort(), Object.keys(real).sort());
  for (const metric of ['http_reqs', 'http_req_failed', 'iterations', 'data_sent', 'http_req_waiting']) {
    assert.deepEqual(
      Object.keys(ours.metrics[metric]!).sort(),
      Object.keys(real.metrics[metric])
        .filter((k: string) => k !== 'thresholds')
        .sort(),
      `${metric} values`,
    );
  }
  assert.deepEqual(
    Object.keys(ours.metrics.http_req_duration!).sort(),
    Object.keys(real.metrics.http_req_duration).sort(),
  );
  const text = await readFile(`${run.dir}/summary.json`, 'utf8');
  assert.match(text, /^\{\n {4}"root_group"/, 'indented with 4 spaces');
});

test("request timings follow k6's tracer: a new connection's dial in blocked and connecting; duration = sending + waiting + receiving", async () => {
  const server = await startTestServer({ delayMs: 20 });
  const run = await runScript(
    await writeScript(`
import http from 'k6/http';
export const options = { iterations: 1 };
export default async function () {
  for (const which of ['first', 'reused']) {
    const res = await http.asyncRequest('GET', '${server.url}/', null, { tags: { which } });
    const t = res.timings;
    const sum = t.sending + t.waiting + t.receiving;
    if (Math.abs(t.duration - sum) > 1e-9) throw new Error('res.timings.duration is not the sum: ' + JSON.stringify(t));
  }
}`),
  );
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const value = (which: string, metric: string) =>
    Number(run.rows.find((r) => r.metric_name === metric && r.extra_tags === `which=${which}`)?.metric_value);
  assert.ok(value('first', 'http_req_connecting') > 0, 'the first request dialled its connection');
  assert.ok(
    value('first', 'http_req_blocked') >= value('first', 'http_req_connecting'),
    'blocked includes the dial, as in k6',
  );
  assert.equal(
    value('reused', 'http_req_connecting'),
    0,
    'a reused keep-alive connection has no connect time',
  );
  assert.equal(value('first', 'http_req_tls_handshaking'), 0, 'no TLS over http');
  for (const which of ['first', 'reused']) {
    assert.ok(value(which, 'http_req_sending') > 0, `${which}: sending is measured`);
    assert.ok(value(which, 'http_req_waiting') >= 15, `${which}: waiting holds the server's 20 ms`);
    const sum =
      value(which, 'http_req_sending') +
      value(which, 'http_req_waiting') +
      value(which, 'http_req_receiving');
    assert.ok(Math.abs(value(which, 'http_req_duration') - sum) < 1e-5, `${which}: duration is the sum`);
  }
});

test('redirects are followed as k6 follows them: one set of samples per hop, Go method rules, maxRedirects', async () => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body}`.trim());
      const [path] = (req.url ?? '/').split('?');
      const to = (status: number, location: string) => res.writeHead(status, { Location: location }).end();
      if (path === '/a') to(302, '/b');
      else if (path === '/post-303') to(303, '/b');
      else if (path === '/post-307') to(307, '/echo');
      else if (path === '/loop') to(302, '/loop');
      else res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const script = (maxRedirects: string, body: string) => `
import http from 'k6/http';
export const options = { iterations: 1${maxRedirects} };
export default async function () {
${body}
}`;
    const run = await runScript(
      await writeScript(
        script(
          '',
          `
  const a = await http.asyncRequest('GET', '${base}/a');
  if (a.status !== 200 || a.url !== '${base}/b' || a.body !== 'ok') throw new Error('a: ' + a.status + ' ' + a.url);
  const named = await http.asyncRequest('GET', '${base}/a', null, { tags: { name: 'start' } });
  if (named.status !== 200) throw new Error('named');
  await http.asyncRequest('POST', '${base}/post-303', 'x=1');
  await http.asyncRequest('POST', '${base}/post-307', 'y=2');
  const loop = await http.asyncRequest('GET', '${base}/loop');
  if (loop.status !== 302) throw new Error('the last redirection is returned');
  const none = await http.asyncRequest('GET', '${base}/a', null, { redirects: 0 });
  if (none.status !== 302 || none.url !== '${base}/a') throw new Error('redirects: 0 follows none');`,
        ),
      ),
    );
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    const reqs = run.rows.filter((r) => r.metric_name === 'http_reqs');
    assert.deepEqual(
      reqs.slice(0, 4).map((r) => [r.url, r.name, r.status]),
      [
        [`${base}/a`, `${base}/a`, '302'],
        [`${base}/b`, `${base}/b`, '200'],
        ['start', 'start', '302'],
        ['start', 'start', '200'],
      ],
      'each hop is a request of its own; a given name stays on every hop',
    );
    assert.ok(seen.includes('GET /b'), 'a 303 turns a POST into a GET without its body');
    assert.ok(seen.includes('POST /echo y=2'), 'a 307 repeats the POST with its body');
    assert.equal(seen.filter((s) => s === 'GET /loop').length, 11, 'k6 follows 10 redirects by default');
    assert.equal(
      run.logs.filter((l) => l.includes('Stopped after 11 redirects')).length,
      1,
      run.logs.join('\n'),
    );
    assert.equal(reqs.length, 4 + 2 + 2 + 11 + 1);

    seen.length = 0;
    const limited = await runScript(
      await writeScript(script(', maxRedirects: 1', `  await http.asyncRequest('GET', '${base}/loop');`)),
    );
    assert.equal(limited.exitCode, 0);
    assert.equal(seen.length, 2, 'options.maxRedirects: 1 follows one');
    assert.ok(limited.logs.some((l) => l.includes('Stopped after 2 redirects')));
    const invalid = await runScript(await writeScript(script(', maxRedirects: -1', '')));
    assert.equal(invalid.exitCode, 104, 'a negative maxRedirects is invalid config');
  } finally {
    server.close();
  }
});

test('the text summary: compact by default, full with a section per scenario and its groups, legacy on request', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
import { check, group } from 'k6';
export const options = {
  scenarios: {
    browse: { executor: 'per-vu-iterations', vus: 1, iterations: 3 },
    buy: { executor: 'per-vu-iterations', vus: 1, iterations: 2, exec: 'buy' },
  },
  thresholds: { http_req_failed: ['rate<0.01'] },
};
export default async function () {
  const res = await http.asyncRequest('GET', '${server.url}/');
  check(res, { 'status is 200': (r) => r.status === 200 });
}
export async function buy() {
  const res = await http.asyncRequest('GET', '${server.url}/cart');
  group('checkout', () => { check(res, { 'cart answered': (r) => r.status === 200 }); });
}`);
  const compact = await runScript(script);
  assert.equal(compact.exitCode, 0, compact.logs.join('\n'));
  assert.match(compact.stdout, /█ THRESHOLDS \n\n {4}http_req_failed\n {4}✓ 'rate<0\.01' rate=0\.00%\n/);
  assert.match(compact.stdout, /checks_total\.+: 5 /);
  assert.match(compact.stdout, /\n {4}http_reqs\.+: 5 /);
  assert.ok(!compact.stdout.includes('SCENARIO:') && !compact.stdout.includes('http_req_waiting'));

  const full = await runScript(script, { summaryMode: 'full' });
  assert.equal(full.exitCode, 0, full.logs.join('\n'));
  const browse = full.stdout.indexOf('█ SCENARIO: browse');
  const buy = full.stdout.indexOf('█ SCENARIO: buy');
  assert.ok(browse > 0 && buy > browse, full.stdout);
  assert.match(full.stdout.slice(browse, buy), /\n {4}http_reqs\.+: 3 /);
  assert.match(full.stdout.slice(buy), /\n {4}http_reqs\.+: 2 /);
  assert.match(
    full.stdout.slice(buy),
    /\n {4}↳ GROUP: checkout \n\n {6}checks_total\.+: 2 [\s\S]*\n {6}✓ cart answered\n/,
  );
  assert.match(full.stdout, /\n {4}http_req_waiting\.+: avg=/);

  const legacy = await runScript(script, { summaryMode: 'legacy' });
  assert.match(legacy.stdout, /\n {3}✓ http_req_failed\.+: 0\.00% +0 out of 5\n/);
  assert.match(legacy.stdout, /\n {5}█ checkout\n/);
  assert.ok(!legacy.stdout.includes('TOTAL RESULTS'));
});

test("--new-machine-readable-summary: handleSummary and the export get k6's schema 1.0.0", async () => {
  const server = await startTestServer({ status: 404 });
  const script = await writeScript(`
import http from 'k6/http';
import { check, group } from 'k6';
export const options = { iterations: 3, summaryTrendStats: ['avg', 'p(95)', 'p(99)'] };
export default async function () {
  const res = await http.asyncRequest('GET', '${server.url}/');
  group('g', () => check(res, { 'found': (r) => r.status === 200, 'answered': (r) => r.status > 0 }));
}
export function handleSummary(data) { return { stdout: JSON.stringify(data) }; }`);
  const run = await runScript(script, { machineReadableSummary: true });
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const data = JSON.parse(run.stdout);
  assert.equal(data.version, '1.0.0');
  assert.equal(data.config.execution, 'local');
  assert.equal(data.config.script, `file://${script}`);
  assert.ok(data.config.duration > 0 && data.config.duration < 30);
  assert.match(data.metadata.generated_at, /^\d{4}-\d\d-\d\dT/);
  assert.deepEqual(data.results.checks.results, [
    { name: 'found', passes: 0, fails: 3 },
    { name: 'answered', passes: 3, fails: 0 },
  ]);
  assert.deepEqual(
    data.results.checks.metrics.map((m: { name: string; values: unknown }) => [m.name, m.values]),
    [
      ['checks_total', { count: 6 }],
      ['checks_failed', { matches: 3, rate: 0.5, total: 6 }],
      ['checks_succeeded', { matches: 3, rate: 0.5, total: 6 }],
    ],
  );
  const metrics = Object.fromEntries(
    data.results.metrics.map((m: { name: string }) => [m.name, m]),
  ) as Record<string, { type: string; contains: string; values: Record<string, number> }>;
  assert.deepEqual(metrics.http_reqs?.values, { count: 3 });
  assert.deepEqual(metrics.http_req_failed?.values, { matches: 3, rate: 1, total: 3 });
  // Trends keep only the schema's statistics among those computed (p(99) has no place).
  assert.deepEqual(Object.keys(metrics.http_req_duration?.values ?? {}).sort(), ['avg', 'p(95)']);
  assert.equal(metrics.http_req_duration?.contains, 'time');
  // The compact summary's metrics: no checks, group_duration or request phases.
  for (const name of ['checks', 'group_duration', 'http_req_waiting'])
    assert.equal(metrics[name], undefined, name);
  // The export is the same document.
  const exported = JSON.parse(await readFile(`${run.dir}/summary.json`, 'utf8'));
  assert.equal(exported.version, '1.0.0');
  assert.deepEqual(exported.results.checks.results, data.results.checks.results);
});
