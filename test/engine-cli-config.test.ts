// `plateau engine run` as a process, continued from test/engine-cli.test.ts: --config, the
// system environment, K6_* variables, logging and its outputs, init errors, the REST API.
// test-run: load
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { request } from 'undici';
import { engineRun, plateau } from './helpers/cli.ts';
import { writeScript } from './helpers/engine.ts';
import { startTestServer } from './helpers/test-server.ts';

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
