// Whether a run directory is still being written: its run.lock names a process that still runs.
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ERROR_CODES, PlateauError } from '../contract/index.ts';

/**
 * The lock a study holds on its run directory while it writes it: who is writing it.
 * harness/study/run-dir.ts writes it (`lockRunDir`) and settles a stale one
 * (`settleRunDir`); the reader lives here, as analysis imports nothing from harness/.
 */
export const RUN_LOCK_FILE = 'run.lock';

/** What run.lock holds. */
export interface RunLock {
  pid: number;
  host: string;
  startedAt: string;
}

/** run.lock of `dir` with whether its process still runs; undefined when there is none. */
export async function readRunLock(dir: string): Promise<(RunLock & { alive: boolean | null }) | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, RUN_LOCK_FILE), 'utf8');
  } catch {
    return undefined;
  }
  let lock: RunLock;
  try {
    lock = JSON.parse(text) as RunLock;
  } catch {
    // Cut short while it was written (a crash in the first instant): nobody holds it.
    return { pid: 0, host: hostname(), startedAt: '', alive: false };
  }
  // On another host the process cannot be looked at (null: not known).
  if (lock.host !== hostname()) return { ...lock, alive: null };
  return { ...lock, alive: processAlive(lock.pid) };
}

/**
 * Refuses, with a PlateauError saying why, a run directory whose run.lock names a process
 * other than this one that still runs (or runs on another host, where it cannot be looked
 * at): its client file is still being written, and what analysis read of it would be part of
 * a run. This process's own lock (a study analysing its run as it ends) and a stale lock
 * (its process is gone: nothing writes the files any more) are no reason to refuse. A lock
 * that cannot be parsed was cut short as it was made, so nobody holds it.
 */
export async function refuseLiveRun(dir: string): Promise<void> {
  const lock = await readRunLock(dir);
  if (!lock || lock.alive === false || (lock.alive && lock.pid === process.pid)) return;
  const here = lock.alive !== null;
  throw new PlateauError(
    ERROR_CODES.INPUT,
    `${dir} is a run in progress: its client file is still being written by plateau process ${lock.pid} on ${lock.host} (run.lock)`,
    {
      hint: here
        ? `analyse it when that run has ended (it stops on Ctrl-C: kill -INT ${lock.pid})`
        : `analyse it when that run has ended; if it ended without removing run.lock, delete ${join(dir, RUN_LOCK_FILE)}`,
    },
  );
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
