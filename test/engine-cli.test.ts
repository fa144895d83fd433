// `plateau engine run` as a process: k6's flags, exit codes, and SIGINT keeping the data.
// test-run: load
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { engineRun, plateau } from './helpers/cli.ts';
import { writeScript } from './helpers/engine.ts';
import { childCommandLines } from './helpers/processes.ts';
import { startTestServer } from './helpers/test-server.ts';

test('SIGINT mid-run exits 105 and still writes the CSV and the summary export (through the GC relaunch)', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { scenarios: { long: { executor: 'constant-arrival-rate', rate: 20, duration: '60s', preAllocatedVUs: 5 } } };
export default async function () { await http.asyncRequest('GET', '${server.url}/'); }`);
  const csv = `${script}.csv`;
  const exported = `${script}.summary.json`;
  const started = Date.now();
  let engineCommand: string[] | undefined;
  const result = await plateau(
    ['engine', 'run', script, '--out', `csv=${csv}`, '--summary-export', exported, '-q'],
    {
      onStart: (child) => {
        // Interrupt once the load is under way (20 requests in), not after a fixed time:
        // on a busy machine the relaunch alone can take seconds.
        const poll = setInterval(() => {
          if (server.requests.length < 20 && Date.now() - started < 20_000) return;
          clearInterval(poll);
          // `plateau engine run` starts the engine again with V8's single-threaded GC;
          // the SIGINT goes to the process the user started and must reach the engine once.
          engineCommand = childCommandLines(child.pid!).find((line) => line.includes('engine'));
          child.kill('SIGINT');
        }, 100);
      },
    },
  );
  assert.ok(engineCommand?.includes('--single-threaded-gc'), `engine child: ${engineCommand?.join(' ')}`);
  for (const flag of ['--no-memory-reducer', '--initial-old-space-size=256']) {
    assert.ok(engineCommand?.includes(flag), `engine child: ${engineCommand?.join(' ')}`);
  }
  assert.equal(result.code, 105, result.stderr);
  assert.ok(Date.now() - started < 30_000);
  const rows = (await readFile(csv, 'utf8')).trim().split('\n');
  assert.ok(rows.filter((r) => r.startsWith('http_reqs,')).length >= 20, 'requests gathered so far are kept');
  const summary = JSON.parse(await readFile(exported, 'utf8'));
  assert.ok(summary.metrics.http_reqs.count >= 20);
});

test('flags follow k6: -e, --tag, --summary-trend-stats, --no-thresholds; bad flags exit 104', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { iterations: 2, thresholds: { http_req_duration: ['p(95)<0'] } };
export default async function () { await http.asyncRequest('GET', __ENV.TARGET + '/'); }`);
  const csv = `${script}.csv.gz`;
  const ok = await plateau([
    'engine',
    'run',
    script,
    '-e',
    `TARGET=${server.url}`,
    '--tag',
    'env=ci',
    '--out',
    `csv=${csv}`,
    '--summary-trend-stats',
    'avg,p(99)',
    '--no-thresholds',
    '-q',
  ]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /http_req_duration\.*: avg=\S+ +p\(99\)=\S+/);
  const text = gunzipSync(await readFile(csv)).toString();
  assert.match(text, /\nhttp_reqs,.*,env=ci,\n/);
  const crossed = await plateau(['engine', 'run', script, '-e', `TARGET=${server.url}`, '-q']);
  assert.equal(crossed.code, 99);
  const bad = await plateau(['engine', 'run', script, '-e', '1BAD=x', '--out', 'influxdb=http://x']);
  assert.equal(bad.code, 104);
  assert.match(bad.stderr, /1BAD=x/);
  assert.match(bad.stderr, /influxdb/);
  const missing = await plateau(['engine', 'run', '/no/such/script.js', '-q']);
  assert.equal(missing.code, 107);
  assert.match(missing.stderr, /script\.js/);
});

test('PLATEAU_ENGINE_GC=parallel runs the engine in the process started, with V8 default GC', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { scenarios: { short: { executor: 'constant-arrival-rate', rate: 10, duration: '2s', preAllocatedVUs: 20 } } };
export default async function () { await http.asyncRequest('GET', '${server.url}/'); }`);
  // A VU for every start, so that a stall of the saturated machine drops none (with 2, one
  // longer than 200 ms would have).
  let children: string[][] = [];
  const result = await plateau(['engine', 'run', script, '-q'], {
    env: { PLATEAU_ENGINE_GC: 'parallel' },
    onStart: (child) => {
      setTimeout(() => {
        children = childCommandLines(child.pid!);
      }, 1500);
    },
  });
  assert.equal(result.code, 0, result.stderr);
  assert.ok(!children.some((line) => line.includes('engine')), `no relaunch: ${JSON.stringify(children)}`);
  assert.equal(server.requests.length, 20);
});

test('summary flags follow k6: --summary-mode disabled / --no-summary / K6_SUMMARY_MODE / K6_NO_SUMMARY, K6_SUMMARY_TREND_STATS, --new-machine-readable-summary', async () => {
  const script = await writeScript(`
export const options = { iterations: 1 };
export default function () {}
export function handleSummary() { return { [__ENV.MARK]: 'handleSummary ran' }; }`);
  const exportFile = `${script}.summary.json`;
  const mark = `${script}.handled.txt`;
  const base = ['engine', 'run', script, '-q', '-e', `MARK=${mark}`, '--summary-export', exportFile];
  for (const disabled of [
    await plateau([...base, '--summary-mode', 'disabled']),
    await plateau([...base, '--no-summary']),
    await plateau(base, { env: { K6_SUMMARY_MODE: 'disabled' } }),
    await plateau(base, { env: { K6_NO_SUMMARY: 'true' } }),
  ]) {
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.equal(disabled.stdout, '', 'no text summary');
    await assert.rejects(readFile(exportFile), 'no summary export');
    await assert.rejects(readFile(mark), 'handleSummary not called');
  }

  const withStats = await plateau([...base], { env: { K6_SUMMARY_TREND_STATS: 'avg,p(99)' } });
  assert.equal(withStats.code, 0, withStats.stderr);
  const exported = JSON.parse(await readFile(exportFile, 'utf8'));
  assert.deepEqual(Object.keys(exported.metrics.iteration_duration).sort(), ['avg', 'p(99)']);
  assert.equal(await readFile(mark, 'utf8'), 'handleSummary ran');

  for (const machine of [
    await plateau([...base, '--new-machine-readable-summary']),
    await plateau(base, { env: { K6_NEW_MACHINE_READABLE_SUMMARY: 'true' } }),
  ]) {
    assert.equal(machine.code, 0, machine.stderr);
    const document = JSON.parse(await readFile(exportFile, 'utf8'));
    assert.equal(document.version, '1.0.0', 'the export in k6 schema 1.0.0');
  }

  const bad = await plateau(base, { env: { K6_SUMMARY_MODE: 'verbose' } });
  assert.equal(bad.code, 104);
  assert.match(
    bad.stderr,
    /K6_SUMMARY_MODE: "verbose" is not a summary mode \(use compact, full, legacy, disabled\)/,
  );
});

test('k6 shortcut flags: -u/--vus, -i/--iterations, -d/--duration, -s/--stage; bad values exit 104', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 1, duration: '1m', preAllocatedVUs: 1 } } };
export default async function () { await http.asyncRequest('GET', __ENV.TARGET + '/?vu=' + __VU); }`);
  const exportFile = `${script}.summary.json`;
  const run = await engineRun(script, [
    '-e',
    `TARGET=${server.url}`,
    '-u',
    '2',
    '-i',
    '6',
    '--summary-export',
    exportFile,
  ]);
  assert.equal(run.code, 0, run.stderr);
  const summary = JSON.parse(await readFile(exportFile, 'utf8'));
  assert.equal(
    summary.metrics.iterations.count,
    6,
    'the default scenario replaced the one-minute script scenario',
  );
  assert.equal(server.requests.length, 6);
  const bad = await engineRun(script, ['--vus', '-1', '--stage', '30s', '-s', '10s:x']);
  assert.equal(bad.code, 104);
  assert.match(bad.stderr, /--vus: "-1" is not accepted/);
  assert.match(bad.stderr, /--stage: "30s" is not accepted \(use DURATION:TARGET, e\.g\. 30s:10\)/);
  assert.match(bad.stderr, /--stage: "10s:x" is not accepted/);
});

test('k6 option flags: --user-agent, --max-redirects, --no-setup, --no-teardown, --setup-timeout; no-op --no-color', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { iterations: 1, userAgent: 'from-the-script' };
export function setup() { console.log('setup ran'); return { from: 'setup' }; }
export default async function (data) {
  console.log('data: ' + JSON.stringify(data));
  await http.asyncRequest('GET', __ENV.TARGET + '/');
}
export function teardown() { console.log('teardown ran'); }`);
  const run = await engineRun(script, [
    '-e',
    `TARGET=${server.url}`,
    '--user-agent',
    'from-the-flag',
    '--no-setup',
    '--no-teardown',
    '--no-color',
    '--no-usage-report',
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(server.requests[0]?.headers['user-agent'], 'from-the-flag', 'the flag outranks the script');
  const logs = run.stderr + run.stdout;
  assert.ok(!logs.includes('setup ran') && !logs.includes('teardown ran'), logs);
  assert.match(logs, /data: undefined/);

  const bad = await engineRun(script, ['--max-redirects', 'many']);
  assert.equal(bad.code, 104);
  assert.match(bad.stderr, /--max-redirects: "many" is not accepted/);
  // Option values from flags are checked as the script's would be.
  const soon = await engineRun(script, ['--setup-timeout', 'soon']);
  assert.equal(soon.code, 104);
  assert.match(soon.stderr, /setupTimeout/);
});

test('k6 option flags: --rps, --min-iteration-duration, --summary-time-unit, K6_SYSTEM_TAGS, --block-hostnames, K6_BLACKLIST_IPS', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 4, iterations: 6 } } };
export default async function () {
  const res = await http.asyncRequest('GET', __ENV.TARGET + '/');
  if (res.error_code) console.log('refused ' + res.error_code);
}`);
  const limited = await engineRun(script, [
    '-e',
    `TARGET=${server.url}`,
    '--rps',
    '10',
    '--min-iteration-duration',
    '10ms',
    '--summary-time-unit',
    'ms',
  ]);
  assert.equal(limited.code, 0, limited.stderr);
  assert.equal(server.requests.length, 6);
  const span = server.requests.at(-1)!.atMs - server.requests[0]!.atMs;
  // 5 × 100 ms, less the first request's dial.
  assert.ok(span >= 400, `6 requests at --rps 10 within ${span.toFixed(0)} ms`);
  assert.match(limited.stdout, /http_req_duration\.*: avg=[\d.]+ms +min=[\d.]+ms/);

  const csv = `${script}.csv`;
  const tagged = await engineRun(script, ['-e', `TARGET=${server.url}`, '--out', `csv=${csv}`], {
    K6_SYSTEM_TAGS: 'status,method,iter',
  });
  assert.equal(tagged.code, 0, tagged.stderr);
  const [header, firstRow] = (await readFile(csv, 'utf8')).split('\n');
  assert.equal(header, 'metric_name,timestamp,metric_value,method,status,extra_tags,metadata');
  assert.match(firstRow ?? '', /^http_reqs,\d+,1\.000000,GET,200,,iter=\d$/);

  const host = new URL(server.url);
  const blocked = await engineRun(script, [
    '-e',
    `TARGET=http://svc.internal.test:${host.port}`,
    '--block-hostnames',
    'x.test,*.internal.test',
  ]);
  assert.equal(blocked.code, 0, blocked.stderr);
  assert.equal((blocked.stdout + blocked.stderr).match(/refused 1111/g)?.length, 6);
  const blacklisted = await engineRun(script, ['-e', `TARGET=${server.url}`], {
    K6_BLACKLIST_IPS: '127.0.0.0/8',
  });
  assert.equal((blacklisted.stdout + blacklisted.stderr).match(/refused 1110/g)?.length, 6);
  assert.equal(server.requests.length, 12, 'refused requests never reach the server');

  const badFlag = await engineRun(script, ['--rps', 'fast']);
  assert.equal(badFlag.code, 104);
  assert.match(badFlag.stderr, /--rps: "fast" is not accepted/);
  // Values the flags pass on are checked as the script's would be, all at once.
  const badValues = await engineRun(script, ['--summary-time-unit', 'hours', '--blacklist-ip', '10.0.0.1']);
  assert.equal(badValues.code, 104);
  assert.match(badValues.stderr, /summaryTimeUnit: "hours"/);
  assert.match(badValues.stderr, /"10\.0\.0\.1" is not a CIDR range/);
});

test('a request waiting for its --rps turn is let go when the scenario ends: the process does not wait out the queue', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { scenarios: { queued: { executor: 'constant-vus', vus: 30, duration: '1s', gracefulStop: '0s' } } };
export default async function () { await http.asyncRequest('GET', '${server.url}/'); }`);
  const started = Date.now();
  // Thirty VUs queue thirty turns a second apart; the scenario ends after one second. A
  // process that waited out the queue would run 29 s: the bound leaves a loaded machine's
  // start and stop all the rest.
  const run = await engineRun(script, ['--rps', '1', '--no-summary']);
  const elapsedMs = Date.now() - started;
  assert.equal(run.code, 0, run.stderr);
  assert.ok(server.requests.length <= 2, `${server.requests.length} requests`);
  assert.ok(elapsedMs < 20_000, `the process ran ${elapsedMs} ms`);
});
