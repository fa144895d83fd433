// Run directories: never shared, locked while written, settled after a crash.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isPlateauError, type RunManifest } from '../../contract/index.ts';
import { createRunDir, lockRunDir, ManifestFile, RUN_LOCK_FILE, settleRunDir } from './run-dir.ts';

const dir = await mkdtemp(join(tmpdir(), 'plateau-run-dir-'));
after(() => rm(dir, { recursive: true, force: true }));

test('studies started in the same second each get a directory of their own', async () => {
  const out = join(dir, 'same-second');
  const made = await Promise.all(Array.from({ length: 20 }, () => createRunDir(out)));
  assert.equal(new Set(made.map((m) => m.dir)).size, 20);
  assert.ok(made.every((m) => m.dir.endsWith(m.id) && existsSync(m.dir)));
});

test('a second lock on one run directory is refused, naming why', async () => {
  const { dir: run } = await createRunDir(join(dir, 'locks'));
  const unlock = await lockRunDir(run);
  await assert.rejects(
    lockRunDir(run),
    (error: unknown) =>
      isPlateauError(error) &&
      /cannot lock/.test(error.message) &&
      /another plateau process/.test(error.hint ?? ''),
  );
  await unlock();
  assert.equal(existsSync(join(run, RUN_LOCK_FILE)), false);
});

test('settleRunDir: no lock is nothing; a live one is refused; a stale one marks a running run failed', async () => {
  const { dir: run } = await createRunDir(join(dir, 'settle'));
  assert.equal(await settleRunDir(run), undefined);
  const manifest = {
    kind: 'plateau.run',
    status: 'running',
    reachedStep: 'r080',
    warnings: [],
  } as unknown as RunManifest;
  await writeFile(join(run, 'run.json'), JSON.stringify(manifest));
  await writeFile(
    join(run, RUN_LOCK_FILE),
    JSON.stringify({ pid: process.pid, host: hostname(), startedAt: '' }),
  );
  await assert.rejects(
    settleRunDir(run),
    (error: unknown) => isPlateauError(error) && /still being written/.test(error.message),
  );
  await writeFile(
    join(run, RUN_LOCK_FILE),
    JSON.stringify({ pid: 999_999_999, host: hostname(), startedAt: '' }),
  );
  assert.match((await settleRunDir(run)) ?? '', /run\.json now says the run failed/);
  const settled = JSON.parse(await readFile(join(run, 'run.json'), 'utf8')) as RunManifest;
  assert.equal(settled.status, 'failed');
  assert.deepEqual(settled.ended, {
    reason: 'failed',
    detail: 'plateau stopped before the run ended (its process 999999999 is gone)',
    atStep: 'r080',
  });
  assert.equal(existsSync(join(run, RUN_LOCK_FILE)), false);
  // A lock cut short in the instant it was written is no one's.
  await writeFile(join(run, RUN_LOCK_FILE), '{"pid":12');
  assert.match((await settleRunDir(run)) ?? '', /is gone and left its lock/);
});

test('ManifestFile writes in the order of the calls, so the last status is the one kept', async () => {
  const { dir: run } = await createRunDir(join(dir, 'order'));
  const file = new ManifestFile(run);
  const manifest = { kind: 'plateau.run', status: 'running' } as RunManifest;
  const saves = ['running', 'running', 'failed'].map((status) =>
    file.save({ ...manifest, status } as RunManifest),
  );
  await Promise.all(saves);
  assert.equal(JSON.parse(await readFile(join(run, 'run.json'), 'utf8')).status, 'failed');
});
