// A study of your own service that plateau starts from plateau.config's `service:`: `plateau
// run` starts it, loads it, keeps its log and stops it on every ending path, and `plateau
// confirm --set` starts it again with one env setting changed and shows that change.
// test-run: load
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { request } from 'undici';
import type { AnalysisResult, RunManifest } from '../contract/index.ts';
import { freeLoopbackPort } from '../harness/study/load-api.ts';
import { plateau } from './helpers/cli.ts';
import { processesMatching, waitFor } from './helpers/processes.ts';
import { writeTinyService } from './helpers/tiny-service.ts';

/**
 * A project directory with the tiny service and a plateau.config.json declaring it: a short
 * study (5 and 10 requests/s, 2 s each, then 2 s of recovery). `marker` is an argument the
 * service ignores, to find its processes; `env` is laid over the service's env.
 */
async function project(marker: string, env: Record<string, string> = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-service-confirm-'));
  await writeTinyService(dir);
  const port = await freeLoopbackPort();
  const config = {
    target: `http://127.0.0.1:${port}`,
    steps: [5, 10],
    hold: 2,
    ramp: 1,
    recovery: 2,
    recoveryRate: 5,
    service: {
      command: `node tiny-service.cjs ${marker}`,
      env: { PORT: port, POOL_MAX: '4', ...env },
      ready: { log: 'ready on \\d+', timeoutSeconds: 20 },
    },
  };
  await writeFile(join(dir, 'plateau.config.json'), JSON.stringify(config, null, 2));
  return { dir, port, runs: join(dir, 'runs') };
}

/** The only or latest run directory under `runs`. */
async function latestRun(runs: string): Promise<string> {
  const ids = (await readdir(runs)).filter((id) => existsSync(join(runs, id, 'run.json'))).sort();
  return join(runs, ids.at(-1)!);
}

const readManifest = async (runDir: string) =>
  JSON.parse(await readFile(join(runDir, 'run.json'), 'utf8')) as RunManifest;

/** Resolves once the service at `port` has answered at least `n` requests of the load. */
async function servedAtLeast(port: number, n: number): Promise<void> {
  for (;;) {
    try {
      const res = await request(`http://127.0.0.1:${port}/served`);
      if (Number(await res.body.text()) >= n) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('run starts the declared service and stops it; confirm --set POOL_MAX=8 reruns it with only that changed', async () => {
  const marker = 'plateau-e2e-confirm';
  const { dir, port, runs } = await project(marker);
  const first = await plateau(['run', '--json', '-q'], { cwd: dir });
  assert.equal(first.code, 0, first.stderr);
  const a = JSON.parse(first.stdout) as AnalysisResult & { runDir: string };
  const manifestA = await readManifest(a.runDir);
  assert.deepEqual(manifestA.serviceProcess, {
    command: ['node', 'tiny-service.cjs', marker],
    cwd: dir,
    env: {
      PORT: { value: String(port), source: 'config' },
      POOL_MAX: { value: '4', source: 'config' },
    },
    ready: { log: 'ready on \\d+', timeoutSeconds: 20 },
    stop: { signal: 'SIGTERM', graceSeconds: 10 },
  });
  assert.equal(manifestA.service, null, 'no reference-service settings');
  assert.equal(manifestA.status, 'completed');
  const logA = await readFile(join(a.runDir, 'service.log'), 'utf8');
  assert.match(logA, /ready on \d+ POOL_MAX=4\n/);
  const servedA = Number(/stopping after (\d+) requests with POOL_MAX=4/.exec(logA)?.[1]);
  assert.ok(
    servedA >= 15,
    `the load reached the service it started (${servedA} requests), which it stopped after`,
  );
  assert.deepEqual(processesMatching(marker), [], 'nothing left running');

  const confirm = await plateau(['confirm', a.runDir, '--set', 'POOL_MAX=8', '--json', '-q'], { cwd: dir });
  assert.equal(confirm.code, 0, confirm.stderr);
  const comparison = JSON.parse(confirm.stdout) as {
    changes: { key: string; before: unknown; after: unknown }[];
    runDir: string;
  };
  assert.deepEqual(
    comparison.changes,
    [{ key: 'POOL_MAX', before: '4', after: '8' }],
    'the one change compare shows is the env setting',
  );
  const manifestB = await readManifest(comparison.runDir);
  assert.deepEqual(manifestB.serviceProcess?.env.POOL_MAX, { value: '8', source: 'flag' });
  assert.equal(manifestB.serviceProcess?.env.PORT?.source, 'manifest');
  assert.deepEqual(manifestB.serviceProcess?.command, manifestA.serviceProcess?.command);
  const logB = await readFile(join(comparison.runDir, 'service.log'), 'utf8');
  const servedB = Number(/stopping after (\d+) requests with POOL_MAX=8/.exec(logB)?.[1]);
  assert.ok(servedB >= 15, `the rerun loaded the service with POOL_MAX=8 (${servedB} requests)`);
  assert.match(await readFile(join(comparison.runDir, 'comparison.json'), 'utf8'), /"key": "POOL_MAX"/);
  assert.equal((await readdir(runs)).length, 2);
  assert.deepEqual(processesMatching(marker), [], 'nothing left running');
});

test('SIGINT mid-load stops the load, then the service, which logs its orderly stop', async () => {
  const marker = 'plateau-e2e-sigint';
  const { dir, port, runs } = await project(marker);
  const result = await plateau(['run', '-q'], {
    cwd: dir,
    onStart: (child) => void servedAtLeast(port, 3).then(() => child.kill('SIGINT')),
  });
  assert.equal(result.code, 105, result.stderr);
  const runDir = await latestRun(runs);
  assert.equal((await readManifest(runDir)).status, 'interrupted');
  assert.match(await readFile(join(runDir, 'service.log'), 'utf8'), /stopping after \d+ requests/);
  assert.ok(await waitFor(() => processesMatching(marker).length === 0, 5000), 'nothing left running');
});

test('the service killed mid-load fails the study, naming it and how it ended', async () => {
  const marker = 'plateau-e2e-sigkill';
  const { dir, port, runs } = await project(marker);
  const result = await plateau(['run', '-q'], {
    cwd: dir,
    onStart: () =>
      void servedAtLeast(port, 3).then(() => {
        for (const pid of processesMatching(marker)) process.kill(pid, 'SIGKILL');
      }),
  });
  assert.equal(result.code, 120, result.stderr);
  assert.match(
    result.stderr,
    /your service `node tiny-service\.cjs plateau-e2e-sigkill` ended during the study \(killed by SIGKILL\)/,
  );
  const manifest = await readManifest(await latestRun(runs));
  assert.equal(manifest.status, 'failed');
  assert.ok(manifest.warnings.some((w) => w.includes('killed by SIGKILL')));
});

test('a service that exits at once fails the run with its exit code and log, before any load', async () => {
  const { dir, runs } = await project('plateau-e2e-exit', { MODE: 'exit' });
  const result = await plateau(['run', '-q'], { cwd: dir });
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /ended before it was ready \(exit code 3\)/);
  assert.match(result.stderr, /cannot open the pool: boom/);
  const runDir = await latestRun(runs);
  assert.equal((await readManifest(runDir)).status, 'failed');
  assert.ok(!existsSync(join(runDir, 'k6.csv.gz')), 'no load was sent');
});
