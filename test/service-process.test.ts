// Your service's life under plateau: a real Node service started from a `service:` block,
// ready by its log line or its URL, logged, stopped with what it started; and each way it
// can fail to start or die, reported with its command, how it ended and its log's tail.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { request } from 'undici';
import { isPlateauError, type PlateauError } from '../contract/index.ts';
import { freeLoopbackPort } from '../harness/study/load-api.ts';
import {
  parseServiceBlock,
  planServiceProcess,
  type ServiceProcessConfig,
  startServiceProcess,
  startStudyService,
} from '../harness/study/service-process.ts';
import { autogroupNice, setAutogroupNice } from '../lib/autogroup.ts';
import { processesMatching, waitFor } from './helpers/processes.ts';
import { writeTinyService } from './helpers/tiny-service.ts';

const dir = await mkdtemp(join(tmpdir(), 'plateau-service-process-'));
await writeTinyService(dir);

/** The tiny service as a parsed block, with `env` and `ready` as given. */
function tiny(env: Record<string, string>, ready: unknown): ServiceProcessConfig {
  const { config, problems } = parseServiceBlock({ command: ['node', 'tiny-service.cjs'], env, ready }, dir);
  assert.deepEqual(problems, []);
  return config!;
}

/** Rejection of `promise` as a PlateauError. */
async function failureOf(promise: Promise<unknown>): Promise<PlateauError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isPlateauError(error), String(error));
    return error;
  }
  assert.fail('it started');
}

// test/run-tests.mjs starts each file in a session of its own, whose priority this file may
// change; from a terminal it would change the terminal's.
const ownSession = process.env.PLATEAU_TEST_MARK !== undefined;

test('the service, in a session of its own, keeps the CPU priority of the one that started it', {
  skip:
    autogroupNice() === undefined
      ? 'this kernel has no sched_autogroup (/proc/self/autogroup)'
      : !ownSession
        ? 'it lowers its session’s CPU priority: run it through npm test or test/run-tests.mjs'
        : false,
}, async () => {
  // A lower priority than a new session's nice 0, which anyone may set.
  const nice = Math.min(19, autogroupNice()! + 3);
  assert.ok(setAutogroupNice(process.pid, nice));
  const service = await startServiceProcess(tiny({ PORT: '0' }, { log: 'ready on \\d+' }), {
    logFile: join(dir, 'log-priority.log'),
  });
  try {
    assert.equal(autogroupNice(service.pid!), nice);
  } finally {
    await service.stop();
  }
});

test('ready by its log line: answers with its env setting, logs to the file, stops on SIGTERM', async () => {
  const logFile = join(dir, 'log-ready.log');
  const service = await startServiceProcess(tiny({ PORT: '0', POOL_MAX: '4' }, { log: 'ready on \\d+' }), {
    logFile,
  });
  const port = /ready on (\d+)/.exec(service.tail())?.[1];
  assert.ok(port, service.tail());
  const res = await request(`http://127.0.0.1:${port}/orders`);
  assert.equal(res.headers['x-pool-max'], '4', 'the env setting reached the service');
  assert.equal(await res.body.text(), 'pool 4\n');
  const exit = await service.stop();
  assert.deepEqual(exit, { code: 0, signal: null }, 'SIGTERM, which it handles by exiting 0');
  assert.equal(service.death(), undefined, 'stopped by plateau is not a death');
  const log = await readFile(logFile, 'utf8');
  assert.match(log, /ready on \d+ POOL_MAX=4\n/);
  assert.match(log, /stopping after 1 requests with POOL_MAX=4\n/, 'its output up to its end is kept');
});

test('ready by URL: the first 2xx, not the 503s while it warms up', async () => {
  const port = await freeLoopbackPort();
  const startedMs = Date.now();
  const service = await startServiceProcess(
    tiny(
      { PORT: String(port), WARMUP_MS: '600' },
      { url: `http://127.0.0.1:${port}/healthz`, timeoutSeconds: 20 },
    ),
    { logFile: join(dir, 'url-ready.log') },
  );
  assert.ok(Date.now() - startedMs >= 600, 'not ready before its warm-up ended');
  const res = await request(`http://127.0.0.1:${port}/healthz`);
  await res.body.dump();
  assert.equal(res.statusCode, 200);
  await service.stop();
});

test('a service that exits at once fails the start with its command, exit code and log tail', async () => {
  const error = await failureOf(
    startServiceProcess(tiny({ MODE: 'exit' }, { log: 'ready on' }), { logFile: join(dir, 'exit.log') }),
  );
  assert.equal(error.code, 'PLATEAU_CHILD_FAILED');
  assert.match(
    error.message,
    /your service `node tiny-service\.cjs` ended before it was ready \(exit code 3\)/,
  );
  assert.match(error.hint ?? '', /exit\.log ends with:\ncannot open the pool: boom\n/);
});

test('a program that does not exist is named, with where it was looked for', async () => {
  const { config } = parseServiceBlock(
    { command: 'no-such-program-plateau --port 1', ready: { log: 'x' } },
    dir,
  );
  const error = await failureOf(startServiceProcess(config!, { logFile: join(dir, 'enoent.log') }));
  assert.match(
    error.message,
    /`no-such-program-plateau --port 1` ended before it was ready \(could not start: .*ENOENT/,
  );
  assert.match(error.hint ?? '', /is no-such-program-plateau on PATH/);
});

test('a service that never becomes ready times out with a clear message, and is stopped', async () => {
  const port = await freeLoopbackPort();
  const logFile = join(dir, 'never.log');
  // 3 s, not 1: the hint quotes what the service printed and the exit code of its handler,
  // and on the saturated machine of a full run node took over a second to start (below).
  const byLog = await failureOf(
    startServiceProcess(
      tiny({ MODE: 'never', SPAWN_CHILD: 'plateau-never-ready-a' }, { log: 'ready on', timeoutSeconds: 3 }),
      {
        logFile,
      },
    ),
  );
  assert.match(
    byLog.message,
    /`node tiny-service\.cjs` was not ready within 3 s: no line of its output matched \/ready on\/ \(stopped: exit code 0\)/,
  );
  assert.match(
    byLog.hint ?? '',
    /warming up forever\nstopping after 0 requests.*\nfix service\.ready, or raise service\.ready\.timeoutSeconds/,
  );
  assert.ok(
    await waitFor(() => processesMatching('plateau-never-ready-a').length === 0, 5000),
    'what it started went with it',
  );

  const byUrl = await failureOf(
    startServiceProcess(
      tiny(
        { MODE: 'never', PORT: String(port) },
        // 3 s, not 1: the message names the last answer, and on the saturated machine of a
        // full run node took over a second to start listening (last: ECONNREFUSED).
        { url: `http://127.0.0.1:${port}/healthz`, timeoutSeconds: 3 },
      ),
      { logFile: join(dir, 'never-url.log') },
    ),
  );
  assert.match(
    byUrl.message,
    /was not ready within 3 s: http:\/\/127\.0\.0\.1:\d+\/healthz never answered 2xx \(last: status 503\)/,
  );
});

test('nothing the service started outlives it, even a child that ignores SIGTERM', async () => {
  const service = await startServiceProcess(tiny({ SPAWN_CHILD: 'plateau-group-b' }, { log: 'ready on' }), {
    logFile: join(dir, 'group.log'),
  });
  assert.ok(await waitFor(() => processesMatching('plateau-group-b').length === 1, 5000), 'its child runs');
  assert.deepEqual(await service.stop(), { code: 0, signal: null });
  assert.ok(
    await waitFor(() => processesMatching('plateau-group-b').length === 0, 5000),
    'its child went with it',
  );
});

test('SIGKILL follows the stop signal after the grace when the service ignores it', async () => {
  const { config } = parseServiceBlock(
    {
      command: [
        'node',
        '-e',
        "process.on('SIGINT', () => console.log('ignored')); console.log('up'); setInterval(() => {}, 1000)",
      ],
      ready: { log: '^up$' },
      stop: { signal: 'SIGINT', graceSeconds: 0.5 },
    },
    dir,
  );
  const service = await startServiceProcess(config!, { logFile: join(dir, 'stubborn.log') });
  assert.deepEqual(await service.stop(), { code: null, signal: 'SIGKILL' });
  assert.match(await readFile(join(dir, 'stubborn.log'), 'utf8'), /^up\nignored\n/);
});

test('a service killed mid-run (SIGKILL) is reported as the reason, with its log', async () => {
  const deaths: PlateauError[] = [];
  const service = await startServiceProcess(tiny({}, { log: 'ready on' }), {
    logFile: join(dir, 'killed.log'),
    onDeath: (error) => deaths.push(error),
  });
  process.kill(service.pid!, 'SIGKILL');
  assert.deepEqual(await service.exited, { code: null, signal: 'SIGKILL' });
  assert.equal(deaths.length, 1);
  assert.match(
    deaths[0]!.message,
    /your service `node tiny-service\.cjs` ended during the study \(killed by SIGKILL\)/,
  );
  assert.match(deaths[0]!.hint ?? '', /ready on \d+ POOL_MAX=unset/);
  assert.equal(service.death(), deaths[0]);
  await service.stop();
});

test('a wait for readiness ends when the study is interrupted', async () => {
  const stop = new AbortController();
  const starting = startServiceProcess(tiny({ MODE: 'never' }, { log: 'ready on', timeoutSeconds: 60 }), {
    logFile: join(dir, 'aborted.log'),
    signal: stop.signal,
  });
  stop.abort();
  const error = await failureOf(starting);
  assert.equal(error.code, 'PLATEAU_INTERRUPTED');
  assert.match(error.message, /interrupted while waiting for your service/);
});

test('with a database plateau owns, the service gets its DATABASE_URL, and both stop', async () => {
  const runDir = await mkdtemp(join(tmpdir(), 'plateau-service-db-'));
  const printUrl = join(runDir, 'print-url.cjs');
  await (await import('node:fs/promises')).writeFile(
    printUrl,
    "console.log('db ' + (process.env.DATABASE_URL || 'none').replace(/:[^:@/]*@/, ':***@'));\nsetInterval(() => {}, 1000);\n",
  );
  const { plan } = planServiceProcess(
    { command: ['node', printUrl], ready: { log: '^db ' } },
    [],
    true,
    runDir,
  );
  const phases: string[] = [];
  const started = await startStudyService(plan!, {
    db: 'embedded',
    dir: runDir,
    progress: (p) => phases.push(p.phase),
  });
  assert.equal(started.database?.info.kind, 'embedded');
  assert.match(started.service.tail(), /^db postgres(ql)?:\/\//m);
  assert.deepEqual(phases, ['starting the database', `starting your service (node ${printUrl})`]);
  const dataDir = started.database?.dataDir;
  assert.equal(await started.stop(), undefined, 'it did not die on its own');
  assert.ok(dataDir && !existsSync(dataDir), 'the embedded database was stopped and removed');
  assert.match(await readFile(join(runDir, 'service.log'), 'utf8'), /^db /);
});
