// The processes of a running study, found from /proc: to kill one as a crash would, and to
// prove afterwards that nothing it started is left running.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** A live child of a process: its pid and command line. */
export interface ChildProcessInfo {
  pid: number;
  argv: string[];
}

/** The live (not zombie) children of `pid`. */
export function childrenOf(pid: number): ChildProcessInfo[] {
  const children: ChildProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== pid || fields[0] === 'Z') continue;
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      children.push({ pid: Number(entry), argv });
    } catch {
      // It ended while being read.
    }
  }
  return children;
}

/**
 * The study's parts among the children of plateau `pid`: the reference service
 * (`plateau serve`), the load engine (`plateau engine run`) and the embedded PostgreSQL's
 * server (`postgres -D /tmp/plateau-pg-…`, whose data directory is returned with it).
 */
export function studyParts(pid: number): {
  service?: number;
  engine?: number;
  postgres?: { pid: number; dataDir: string };
} {
  const parts: ReturnType<typeof studyParts> = {};
  for (const child of childrenOf(pid)) {
    const line = child.argv.join(' ');
    if (/plateau\.js serve\b/.test(line)) parts.service = child.pid;
    else if (/plateau\.js engine run\b/.test(line)) parts.engine = child.pid;
    else if (/\bpostgres\b/.test(child.argv[0] ?? '')) {
      const dataDir = child.argv[child.argv.indexOf('-D') + 1];
      if (dataDir) parts.postgres = { pid: child.pid, dataDir };
    }
  }
  return parts;
}

/** Whether `pid` is a live process (a zombie is not). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * PIDs of live processes whose working directory is `dir` or below it (deleted or not):
 * PostgreSQL's backends and helpers run in their cluster's data directory, and their command
 * lines do not name it.
 */
export function processesIn(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`).replace(/ \(deleted\)$/, '');
      if ((cwd === dir || cwd.startsWith(`${dir}/`)) && isAlive(Number(entry))) pids.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}
