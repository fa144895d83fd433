// Run directories: runs/<id>/ with an id that sorts by time and never collides, the lock a
// running study holds on its directory, and run.json written whole and in order.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { RUN_LOCK_FILE, type RunLock, readRunLock } from '../../analysis/live-run.ts';
import { ERROR_CODES, PlateauError, type RunManifest } from '../../contract/index.ts';
import { writeFileAtomic } from '../../lib/atomic-write.ts';
import { why } from '../../lib/fs-error-words.ts';

export { RUN_LOCK_FILE, type RunLock, readRunLock };

/** `20261201-101500-a1b2c3`: UTC time to the second, then random hex so ids never collide. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

/** Tries before giving up on a fresh id (each collision is a 1 in 16 million event). */
const CREATE_TRIES = 5;

/**
 * Creates `<outDir>/<id>/` and returns its path and id. The directory is made by this call
 * alone (never one that already exists: two studies started in the same second by two
 * processes each get their own, and nothing of an earlier run is ever written over). An
 * `outDir` that is a file, read-only or otherwise not writable is a PlateauError (exit 104)
 * naming it and what to do.
 */
export async function createRunDir(outDir: string): Promise<{ id: string; dir: string }> {
  const out = resolve(outDir);
  const info = await stat(out).catch(() => undefined);
  if (info && !info.isDirectory()) {
    throw new PlateauError(ERROR_CODES.INPUT, `--out ${outDir} is a file, not a directory`, {
      hint: 'give --out a directory (it is created when missing); each run goes into <out>/<id>/',
    });
  }
  try {
    await makeDirectories(out);
    for (let attempt = 1; ; attempt++) {
      const id = newRunId();
      const dir = join(out, id);
      try {
        await mkdir(dir);
        return { id, dir };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= CREATE_TRIES) throw error;
      }
    }
  } catch (error) {
    throw new PlateauError(ERROR_CODES.INPUT, `cannot create a run directory in ${out}: ${why(error)}`, {
      hint: 'choose a writable --out directory',
      cause: error,
    });
  }
}

/**
 * `mkdir -p`, one level at a time: Node's recursive mkdir reports a read-only parent as
 * ENOENT, and the user must read why (EROFS, EACCES) instead.
 */
async function makeDirectories(path: string): Promise<void> {
  try {
    await mkdir(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT' || dirname(path) === path) throw error;
    await makeDirectories(dirname(path));
    await mkdir(path).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== 'EEXIST') throw again;
    });
  }
}

/**
 * Takes the run directory's lock for this process: run.lock, created only if absent, naming
 * the process. Resolves with the function that removes it (at the study's end). A crash
 * leaves it behind: {@link settleRunDir} tells a stale lock from a live one.
 */
export async function lockRunDir(dir: string): Promise<() => Promise<void>> {
  const lock: RunLock = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  try {
    await writeFile(join(dir, RUN_LOCK_FILE), `${JSON.stringify(lock)}\n`, { flag: 'wx' });
  } catch (error) {
    throw new PlateauError(ERROR_CODES.INPUT, `cannot lock the run directory ${dir}: ${why(error)}`, {
      hint:
        (error as NodeJS.ErrnoException).code === 'EEXIST'
          ? 'another plateau process holds it; each run writes into a directory of its own'
          : 'choose a writable --out directory',
      cause: error,
    });
  }
  return () => rm(join(dir, RUN_LOCK_FILE), { force: true });
}

/**
 * Readies a run directory for analysis. A study still writing it (run.lock names a live
 * process) is refused with a PlateauError (exit 104): its files are not finished, and the
 * study would write over the analysis. A stale lock (its process is gone: plateau itself was
 * killed, or crashed) is settled: run.json, if it still says `running`, is marked `failed`
 * with why (every other field kept), and the lock and the space reserved for the final files
 * are removed. Resolves with what was settled, in words, or undefined when nothing was.
 */
export async function settleRunDir(dir: string): Promise<string | undefined> {
  const lock = await readRunLock(dir);
  if (!lock) return undefined;
  if (lock.alive !== false) {
    const who = `plateau process ${lock.pid} on ${lock.host}`;
    throw new PlateauError(ERROR_CODES.INPUT, `${dir} is still being written by ${who} (run.lock)`, {
      hint:
        lock.alive === null
          ? `analyse it when that run has ended; if it ended without removing run.lock, delete ${join(dir, RUN_LOCK_FILE)}`
          : `analyse it when that run has ended (it stops on Ctrl-C: kill -INT ${lock.pid})`,
    });
  }
  const path = join(dir, 'run.json');
  let settled = `the run's plateau process (${lock.pid || 'unknown'}) is gone and left its lock`;
  const manifest = await readFile(path, 'utf8')
    .then((text) => JSON.parse(text) as RunManifest)
    .catch(() => undefined);
  if (manifest?.kind === 'plateau.run' && manifest.status === 'running') {
    manifest.status = 'failed';
    manifest.ended = {
      reason: 'failed',
      detail: lock.pid
        ? `plateau stopped before the run ended (its process ${lock.pid} is gone)`
        : 'plateau stopped before the run ended',
      atStep: manifest.reachedStep,
    };
    await writeManifest(dir, manifest);
    settled += ': run.json now says the run failed';
  }
  await rm(join(dir, RESERVE_FILE), { force: true });
  await rm(join(dir, RUN_LOCK_FILE), { force: true });
  return settled;
}

/** The file that keeps room for a study's final files until its end (disk-space.ts). */
export const RESERVE_FILE = '.plateau-reserve';

/** Writes run.json atomically (an interrupted run never leaves a half-written manifest). */
export function writeManifest(dir: string, manifest: RunManifest): Promise<void> {
  return writeFileAtomic(join(dir, 'run.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * run.json, written whole and in the order of the calls: a study rewrites it as each step
 * begins and once more at its end, and a slow earlier write must never land after the last.
 */
export class ManifestFile {
  readonly #dir: string;
  #last: Promise<void> = Promise.resolve();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** Writes `manifest` as it is now, after every earlier save; rejects when this write fails. */
  save(manifest: RunManifest): Promise<void> {
    const text = `${JSON.stringify(manifest, null, 2)}\n`;
    const write = this.#last
      .catch(() => undefined)
      .then(() => writeFileAtomic(join(this.#dir, 'run.json'), text));
    this.#last = write;
    return write;
  }
}
