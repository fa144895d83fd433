// `plateau run` as a command: the k6 binary it drives, what it polls during the load, bad
// options, and how it ends when the service dies or it is interrupted. The studies and their
// verdicts are in test/capacity-study.test.ts.
// test-run: load
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { AnalysisResult, RunManifest } from '../contract/index.ts';
import { sendJson } from '../target-service/instrumentation/step-instrumentation.ts';
import { StepRecorder } from '../target-service/instrumentation/step-recorder.ts';
import { PLATEAU_BIN, plateau } from './helpers/cli.ts';
import { processesMatching, waitFor } from './helpers/processes.ts';
import { newRunDirIn, reached } from './helpers/run-dirs.ts';
import { TEST_PAYLOAD } from './helpers/small-study.ts';
import { startTestServer } from './helpers/test-server.ts';

const bin = PLATEAU_BIN;
const fakeK6 = fileURLToPath(new URL('./fixtures/fake-k6/k6', import.meta.url));
const out = await mkdtemp(join(tmpdir(), 'plateau-runs-'));
after(() => rm(out, { recursive: true, force: true }));

test('--engine k6 drives a k6 binary with the same flags and collects its files', async () => {
  const server = await startTestServer();
  const log = join(out, 'fake-k6-args.ndjson');
  const result = await plateau(
    [
      'run',
      '--engine',
      'k6',
      '--k6-bin',
      fakeK6,
      '--target',
      server.url,
      '--steps',
      '5,10',
      '--hold',
      '2',
      '--ramp',
      '1',
      '--recovery',
      '2',
      '--out',
      out,
    ],
    { env: { FAKE_K6_LOG: log } },
  );
  assert.equal(result.code, 0, result.stderr);
  const calls = (await readFile(log, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as string[]);
  assert.deepEqual(calls[0], ['version'], 'asked for its version first, for run.json');
  const args = calls.find((c) => c[0] === 'run')!;
  assert.equal(args[0], 'run');
  assert.ok(args.includes(`BASE_URL=${server.url}`));
  assert.ok(args.includes('STEPS=5,10'));
  assert.match(result.stdout, /r005 +5 +5 +5/);
  assert.match(result.stdout, /no server side/);
  const runDir = /run directory: (\S+)/.exec(result.stdout)?.[1];
  const manifest = JSON.parse(await readFile(join(runDir!, 'run.json'), 'utf8')) as RunManifest;
  assert.equal(manifest.engine.version, 'k6 v1.0.0-fake (plateau test stand-in)');
});

test('during the load the study polls /steps/live, and reads the whole /steps report only before and after', async () => {
  // A real recorder behind a test server: /steps summarises every histogram, which stalls
  // a busy service's event loop, so polling it every second lowered the plateau measured.
  const recorder = new StepRecorder({
    service: 'polled',
    settings: { poolMax: null, queueMax: null, acquireTimeoutMs: null, shed: null, extra: {} },
  });
  recorder.startTicking();
  after(() => recorder.stopTicking());
  const server = await startTestServer({
    handle: (req, res) => {
      const path = req.url?.split('?')[0];
      if (path === '/steps') return sendJson(res, 200, recorder.report());
      if (path === '/steps/live') return sendJson(res, 200, recorder.live());
      const trace = recorder.beginRequest(req.headers['x-load-step']);
      res.end('ok');
      trace.finish(200);
    },
  });
  const result = await plateau([
    'run',
    ...['--target', server.url, '--steps', '5,10', '--hold', '2', '--ramp', '1', '--recovery', '2'],
    ...['--out', out, '--json'],
  ]);
  assert.equal(result.code, 0, result.stderr);
  const gets = (path: string) => server.requests.filter((r) => r.url.split('?')[0] === path).length;
  assert.ok(gets('/steps/live') >= 3, `${gets('/steps/live')} polls of /steps/live`);
  assert.ok(gets('/steps') <= 2, `${gets('/steps')} reads of /steps: one to detect it, one to collect`);
  const analysis = JSON.parse(result.stdout) as AnalysisResult & { runDir: string };
  assert.ok(existsSync(join(analysis.runDir, 'server.json')));
});

test('a missing k6 binary is named, with how to install it or use the embedded engine', async () => {
  const server = await startTestServer();
  const before = await readdir(out);
  const result = await plateau([
    'run',
    '--engine',
    'k6',
    '--k6-bin',
    '/nonexistent/k6',
    '--target',
    server.url,
    '--quick',
    '--out',
    out,
  ]);
  assert.equal(result.code, 104, 'a bad --k6-bin is a bad option');
  assert.match(result.stderr, /k6 not found: \/nonexistent\/k6 does not exist/);
  assert.match(result.stderr, /install k6.*--engine embedded/);
  assert.deepEqual(await readdir(out), before, 'named before any run directory, database or service');
});

test('bad options and a remote target exit 104 before anything starts', async () => {
  const before = await readdir(out);
  const result = await plateau([
    'run',
    '--steps',
    '40,20',
    '--hold',
    '0',
    '--set',
    'NOPE=1',
    '--target',
    'http://192.168.1.10',
    '--out',
    out,
  ]);
  assert.equal(result.code, 104);
  for (const word of ['--steps', '--hold', '--set', '--target', 'loopback'])
    assert.match(result.stderr, new RegExp(word));
  assert.deepEqual(await readdir(out), before, 'no run directory was created');
});

test('the service dying mid-run ends the study with a clear error naming it; the data is kept', async () => {
  const serveCommand = `${bin} serve`;
  const before = await readdir(out);
  const result = await plateau(['run', '--quick', ...TEST_PAYLOAD, '--out', out, '-q'], {
    onStart: () => {
      void (async () => {
        // Once the load has reached r040, kill the service as a crash would.
        await reached(await newRunDirIn(out, before), 'r040');
        const [pid] = processesMatching(serveCommand);
        if (pid !== undefined) process.kill(pid, 'SIGKILL');
      })();
    },
  });
  assert.equal(result.code, 120, result.stderr);
  assert.match(
    result.stderr,
    /the statement service died \(killed by SIGKILL\) during r0\d\d: the run did not complete/,
  );
  const runs = (await readdir(out)).sort();
  const dir = join(out, runs.filter((r) => existsSync(join(out, r, 'run.json'))).at(-1)!);
  const manifest = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunManifest;
  assert.equal(manifest.status, 'failed');
  assert.match(manifest.reachedStep ?? '', /^r0\d\d$/);
  assert.ok(existsSync(join(dir, 'k6.csv.gz')), 'the client data gathered so far is kept');
});

test('SIGINT mid-study: exit 105, an interrupted and analysable run, no orphan process', async () => {
  const postgresBefore = processesMatching('plateau-pg-').length;
  const before = await readdir(out);
  const result = await plateau(['run', '--quick', ...TEST_PAYLOAD, '--out', out, '-q'], {
    onStart: (child) => {
      void (async () => {
        // Mid-study: once the load has reached r040.
        await reached(await newRunDirIn(out, before), 'r040');
        child.kill('SIGINT');
      })();
    },
  });
  assert.equal(result.code, 105, result.stderr);
  const dir = /partial run kept in (\S+)/.exec(result.stderr)?.[1];
  assert.ok(dir, result.stderr);
  const manifest = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunManifest;
  assert.equal(manifest.status, 'interrupted');
  assert.ok(existsSync(join(dir, 'analysis.json')), 'the partial run was analysed');
  assert.ok(
    await waitFor(() => processesMatching('plateau-pg-').length <= postgresBefore, 10_000),
    'no postgres left',
  );
  assert.equal(processesMatching(`${bin} serve`).length, 0, 'no service left');
});
