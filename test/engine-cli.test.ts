// `plateau engine run` as a process: k6's flags, exit codes, and SIGINT keeping the data.
// test-run: load
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { plateau } from './helpers/cli.ts';
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
export const options = { scenarios: { short: { executor: 'constant-arrival-rate', rate: 10, duration: '2s', preAllocatedVUs: 2 } } };
export default async function () { await http.asyncRequest('GET', '${server.url}/'); }`);
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

/** `plateau engine run <script> -q …args`, with extra environment variables. */
const engineRun = (script: string, args: string[], env?: NodeJS.ProcessEnv) =>
  plateau(['engine', 'run', script, '-q', ...args], env ? { env } : {});

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

test('--config reads k6 options from a JSON file, below the script and the flags; k6 flags the engine does not apply are warned about', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { userAgent: 'from-the-script' };
export default async function () { await http.asyncRequest('GET', __ENV.TARGET + '/'); }`);
  const config = `${script}.config.json`;
  await writeFile(
    config,
    JSON.stringify({
      iterations: 3,
      userAgent: 'from-the-config',
      collectors: { csv: { fileName: 'x.csv' } },
    }),
  );
  const run = await engineRun(script, ['-e', `TARGET=${server.url}`, '-c', config, '--dns', 'ttl=1m', '-l']);
  assert.equal(run.code, 0, run.stderr);
  // The config file's iterations apply (the script sets none); the script's userAgent outranks it.
  assert.equal(server.requests.length, 3);
  assert.equal(server.requests[0]?.headers['user-agent'], 'from-the-script');
  assert.match(run.stderr, /options\.dns is not applied by the embedded engine/);
  assert.match(run.stderr, /options\.linger is not applied/);
  assert.ok(!/collectors/.test(run.stderr), 'collectors pass silently');

  const flagWins = await engineRun(script, [
    '-e',
    `TARGET=${server.url}`,
    '--config',
    config,
    '--user-agent',
    'from-the-flag',
  ]);
  assert.equal(flagWins.code, 0, flagWins.stderr);
  assert.equal(server.requests.at(-1)?.headers['user-agent'], 'from-the-flag');

  const missing = await engineRun(script, ['--config', `${script}.nowhere.json`]);
  assert.equal(missing.code, 104);
  assert.match(missing.stderr, /--config: cannot read .*nowhere\.json: ENOENT/);
  await writeFile(config, '{ "vus": 2, ');
  const broken = await engineRun(script, [], { K6_CONFIG: config });
  assert.equal(broken.code, 104);
  assert.match(broken.stderr, /--config: .*config\.json is not JSON/);
});

test('the system environment reaches __ENV unless --include-system-env-vars=false or K6_INCLUDE_SYSTEM_ENV_VARS=false', async () => {
  const script = await writeScript(`
export const options = { iterations: 1 };
export default function () { console.log('seen: ' + __ENV.PLATEAU_TEST_SECRET + ' ' + __ENV.GIVEN); }`);
  const env = { PLATEAU_TEST_SECRET: 'from-the-system' };
  const included = await engineRun(script, ['-e', 'GIVEN=flag'], env);
  assert.match(included.stderr, /seen: from-the-system flag/);
  const excluded = await engineRun(script, ['-e', 'GIVEN=flag', '--include-system-env-vars=false'], env);
  assert.match(excluded.stderr, /seen: undefined flag/);
  const byVariable = await engineRun(script, ['-e', 'GIVEN=flag'], {
    ...env,
    K6_INCLUDE_SYSTEM_ENV_VARS: 'false',
  });
  assert.match(byVariable.stderr, /seen: undefined flag/);
});

test('--log-format json and raw write log lines as k6 does; K6_LOG_FORMAT; a bad format exits 104', async () => {
  const script = await writeScript(`
export const options = { iterations: 1 };
export default function () { console.log('hello from the script'); }`);
  const json = await engineRun(script, ['--log-format', 'json']);
  assert.equal(json.code, 0, json.stderr);
  const lines = json.stderr
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const hello = lines.find((l) => l.msg === 'hello from the script');
  assert.ok(hello, json.stderr);
  assert.equal(hello.level, 'info');
  assert.equal(hello.source, 'console');
  assert.match(hello.time, /^\d{4}-\d\d-\d\dT/);
  const raw = await engineRun(script, [], { K6_LOG_FORMAT: 'raw' });
  assert.match(raw.stderr, /^hello from the script$/m);
  const bad = await engineRun(script, ['--log-format', 'xml']);
  assert.equal(bad.code, 104);
  assert.match(bad.stderr, /--log-format: "xml" is not accepted \(use json or raw/);
});

test('--console-output appends the script’s console lines to a file, not stderr; an unwritable path exits 104', async () => {
  const script = await writeScript(`
export const options = { iterations: 2 };
export default function () { console.log('iteration says hi'); }`);
  const file = `${script}.console.log`;
  const run = await engineRun(script, ['--console-output', file]);
  assert.equal(run.code, 0, run.stderr);
  assert.ok(!run.stderr.includes('iteration says hi'), 'not on stderr');
  const lines = (await readFile(file, 'utf8')).trim().split('\n');
  assert.equal(lines.length, 2);
  for (const line of lines)
    assert.match(line, /^time="[^"]+" level=info msg="iteration says hi" source=console$/);
  const bad = await engineRun(script, ['--console-output', '/no/such/dir/console.log']);
  assert.equal(bad.code, 104);
  assert.match(bad.stderr, /cannot write the console output to \/no\/such\/dir\/console\.log/);
});

test('--http-debug logs each request and response; =full adds bodies; a bad mode exits 104', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { iterations: 1 };
export default async function () { await http.asyncRequest('POST', __ENV.TARGET + '/debug?x=1', 'hello-body'); }`);
  const headers = await engineRun(script, ['-e', `TARGET=${server.url}`, '--http-debug']);
  assert.equal(headers.code, 0, headers.stderr);
  assert.match(headers.stderr, /Request:\\nPOST \/debug\?x=1 HTTP\/1\.1\\nHost: 127\.0\.0\.1:\d+/);
  assert.match(headers.stderr, /Response:\\nHTTP\/1\.1 200 OK/);
  assert.match(headers.stderr, /source=http-debug/);
  assert.ok(!headers.stderr.includes('hello-body'), 'no bodies without =full');
  const full = await engineRun(script, ['-e', `TARGET=${server.url}`, '--http-debug=full']);
  assert.equal(full.code, 0, full.stderr);
  assert.match(full.stderr, /hello-body/);
  const bad = await engineRun(script, ['--http-debug=bodies']);
  assert.equal(bad.code, 104);
  assert.match(bad.stderr, /--http-debug: "bodies" is not accepted/);
});

test('-v/--verbose shows console.debug; --log-output routes log lines (stdout, none, file=PATH); a bad value exits 104', async () => {
  const script = await writeScript(`
export const options = { iterations: 1 };
export default function () { console.debug('a debug line'); console.warn('a warning line'); }`);
  const quiet = await engineRun(script, ['--no-summary']);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.ok(!quiet.stderr.includes('a debug line'), 'console.debug only with --verbose, as k6');
  assert.match(quiet.stderr, /a warning line/);
  const verbose = await engineRun(script, ['--no-summary', '-v']);
  assert.match(verbose.stderr, /level=debug msg="a debug line"/);
  const toStdout = await engineRun(script, ['--no-summary', '--log-output', 'stdout']);
  assert.match(toStdout.stdout, /a warning line/);
  assert.ok(!toStdout.stderr.includes('a warning line'));
  const none = await engineRun(script, ['--no-summary', '--log-output', 'none']);
  assert.ok(!none.stderr.includes('a warning line') && !none.stdout.includes('a warning line'));
  const file = `${script}.log`;
  const toFile = await engineRun(script, ['--no-summary', `--log-output=file=${file}`]);
  assert.equal(toFile.code, 0, toFile.stderr);
  assert.match(await readFile(file, 'utf8'), /level=warning msg="a warning line" source=console/);
  const bad = await engineRun(script, ['--log-output', 'loki']);
  assert.equal(bad.code, 104);
  assert.match(bad.stderr, /--log-output: "loki" is not accepted \(use stderr, stdout, none or file=PATH\)/);
});

test('K6_* environment variables configure engine run as in k6: below flags, above the script', async () => {
  const script = await writeScript(`
export const options = { iterations: 1 };
export function setup() { console.log('setup ran'); }
export default function () {}`);
  const exportFile = `${script}.env-summary.json`;
  const iterationsOf = async (run: { code: number | null; stderr: string }) => {
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(await readFile(exportFile, 'utf8')).metrics.iterations.count as number;
  };
  const env = { K6_VUS: '2', K6_ITERATIONS: '6', K6_NO_SETUP: 'true', K6_SUMMARY_EXPORT: exportFile };
  const fromEnv = await engineRun(script, [], env);
  assert.equal(await iterationsOf(fromEnv), 6, 'K6_ITERATIONS outranks the script');
  assert.ok(!fromEnv.stderr.includes('setup ran'), 'K6_NO_SETUP=true skips setup()');
  const flagWins = await engineRun(script, ['-i', '3'], env);
  assert.equal(await iterationsOf(flagWins), 3, 'a flag outranks the environment');
  const bad = await engineRun(script, [], { K6_THROW: 'maybe' });
  assert.equal(bad.code, 104);
  assert.match(bad.stderr, /K6_THROW: "maybe" is not accepted \(use true or false\)/);
});

test("an init error shows the script's message and its own frames, not the engine's stack", async () => {
  const script = await writeScript(`
function readSteps() {
  if (!/^\\d+$/.test(__ENV.STEPS)) throw new Error('STEPS "' + __ENV.STEPS + '" is not accepted');
}
readSteps();
export default function () {}
`);
  for (const command of [
    ['engine', 'schedule'],
    ['engine', 'run'],
  ]) {
    const result = await plateau([...command, script, '-e', 'STEPS=abc']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /STEPS "abc" is not accepted/);
    assert.match(result.stderr, /script\.js:3:\d+/, 'the line that threw, in the script');
    assert.doesNotMatch(result.stderr, /node:internal|engine\/js\/loader/, 'no engine frames');
  }
});

test("--address serves k6's REST API while the test runs; a bad address exits 104, a taken port 106", async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: 20, duration: '3s', preAllocatedVUs: 2 } } };
export default async function () { await http.asyncRequest('GET', __ENV.TARGET + '/'); }`);
  const taken = createServer().listen(0, '127.0.0.1');
  await once(taken, 'listening');
  const takenPort = (taken.address() as AddressInfo).port;
  try {
    // A free port: listen on 0, close, hand it over (what the harness does).
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    let seen: { status: number; count: number } | undefined;
    const run = await plateau(
      ['engine', 'run', script, '-q', '-e', `TARGET=${server.url}`, '--address', `127.0.0.1:${port}`],
      {
        onStart: () => {
          const poll = setInterval(async () => {
            try {
              const status = await request(`http://127.0.0.1:${port}/v1/status`);
              const reqs = await request(`http://127.0.0.1:${port}/v1/metrics/http_reqs`);
              const state = (await status.body.json()) as { data: { attributes: { status: number } } };
              const body = (await reqs.body.json()) as {
                data?: { attributes: { sample: { count: number } } };
              };
              if (state.data.attributes.status === 7 && body.data) {
                seen = { status: 7, count: body.data.attributes.sample.count };
                clearInterval(poll);
              }
            } catch {
              // not listening yet, or already closed
            }
          }, 200);
          setTimeout(() => clearInterval(poll), 15_000).unref();
        },
      },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.ok(seen && seen.count > 0, 'http_reqs read while the scenario ran');

    const bad = await engineRun(script, ['--address', 'localhost'], {});
    assert.equal(bad.code, 104);
    assert.match(bad.stderr, /--address: "localhost" is not host:port/);
    const badEnv = await engineRun(script, [], { K6_ADDRESS: 'nowhere:99999' });
    assert.equal(badEnv.code, 104);
    assert.match(badEnv.stderr, /K6_ADDRESS: "nowhere:99999" is not host:port/);

    const before = server.requests.length;
    const busy = await engineRun(script, [
      '-e',
      `TARGET=${server.url}`,
      '--address',
      `127.0.0.1:${takenPort}`,
    ]);
    assert.equal(busy.code, 106, busy.stderr);
    assert.match(busy.stderr, /the REST API cannot listen on 127\.0\.0\.1:\d+/);
    assert.equal(server.requests.length, before, 'the run with the taken port sent nothing');
  } finally {
    taken.close();
  }
});
