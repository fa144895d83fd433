// Finding processes by command line, to prove nothing was left running; whether a tool can run.
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';

/**
 * test/run-tests.mjs runs several test files at once and gives each a PLATEAU_TEST_MARK in its
 * environment (its path and the run's TMPDIR), which every process it starts inherits. A
 * process carrying another file's mark is that file's, not this one's, and one carrying this
 * file's path from another run was left by an earlier run that was killed: counting either as
 * left behind, or killing it, would be wrong.
 */
const MARK = process.env.PLATEAU_TEST_MARK;

/** Whether process `pid` was started by another test file (it carries another file's mark). */
function isAnotherFiles(pid: string): boolean {
  if (MARK === undefined) return false;
  let environ: string;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return false;
  }
  const mark = environ.split('\0').find((line) => line.startsWith('PLATEAU_TEST_MARK='));
  return mark !== undefined && mark !== `PLATEAU_TEST_MARK=${MARK}`;
}

/**
 * PIDs of live processes whose command line contains `needle`, leaving out those another test
 * file started (a process with no mark at all is counted: nothing is missed).
 */
export function processesMatching(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmdline.includes(needle) && state !== 'Z' && !isAnotherFiles(entry)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** Waits until `check` is true, polling every 50 ms, for at most `timeoutMs`. */
export async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** Command lines (arguments split) of the live children of `pid`, from /proc. */
export function childCommandLines(pid: number): string[][] {
  const lines: string[][] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent !== pid) continue;
      lines.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean));
    } catch {
      // The process ended while being read.
    }
  }
  return lines;
}

/** Whether `path` exists and this process may execute it (a suite's check for a tool it needs). */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
