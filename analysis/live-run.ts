// Whether a run directory is still being written: its run.lock names a process that still runs.
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ERROR_CODES, PlateauError } from '../contract/index.ts';

/**
 * The lock a study holds on its run directory while it writes it. harness/study/run-dir.ts
 * writes it (`lockRunDir`) and settles a stale one (`settleRunDir`); analysis only reads it,
 * as analysis imports nothing from harness/.
 */
export const RUN_LOCK_FILE = 'run.lock';

/**
 * Refuses, with a PlateauError saying why, a run directory whose run.lock names a process
 * other than this one that still runs (or runs on another host, where it cannot be looked
 * at): its client file is still being written, and what analysis read of it would be part of
 * a run. This process's own lock (a study analysing its run as it ends) and a stale lock
 * (its process is gone: nothing writes the files any more) are no reason to refuse. A lock
 * that cannot be parsed was cut short as it was made, so nobody holds it.
 */
export async function refuseLiveRun(dir: string): Promise<void> {
  let lock: { pid?: unknown; host?: unknown };
  try {
    lock = JSON.parse(await readFile(join(dir, RUN_LOCK_FILE), 'utf8'));
  } catch {
    return;
  }
  const pid = typeof lock.pid === 'number' ? lock.pid : 0;
  const host = typeof lock.host === 'string' ? lock.host : hostname();
  const here = host === hostname();
  if (here && (pid === process.pid || !processAlive(pid))) return;
  throw new PlateauError(
    ERROR_CODES.INPUT,
    `${dir} is a run in progress: its client file is still being written by plateau process ${pid} on ${host} (run.lock)`,
    {
      hint: here
        ? `analyse it when that run has ended (it stops on Ctrl-C: kill -INT ${pid})`
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
