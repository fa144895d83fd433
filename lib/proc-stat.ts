// CPU time of a process and of the whole machine, from Linux's /proc (proc(5)).
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** USER_HZ: /proc counts CPU time in these ticks per second on every Linux architecture. */
const CLOCK_TICKS_PER_SEC = 100;

/** CPU µs (user + system) process `pid` has used so far; undefined once it is gone. */
export function processCpuUs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // After "pid (comm) ": state is field 0, utime field 11, stime field 12.
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC) * 1e6;
  } catch {
    return undefined;
  }
}

/** Resident memory of process `pid`, MB (VmRSS); undefined once it is gone. */
export function processRssMb(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}

/** Busy and total CPU ticks of the machine so far, over all cores; undefined without /proc. */
export function machineCpuTicks(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    // cpu user nice system idle iowait irq softirq steal guest guest_nice
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/**
 * The live children of process `pid` (their parent is `pid`), from every /proc/<n>/stat;
 * empty without /proc. A scan rather than /proc/<pid>/task/<tid>/children, which not every
 * kernel has.
 */
export function childPids(pid: number): number[] {
  const children: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return children;
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) > 0x39) continue; // not a number: self, sys, …
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After "pid (comm) ": state, then the parent's pid.
      const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(parent) === pid && state !== 'Z') children.push(Number(entry));
    } catch {
      // It ended while we looked.
    }
  }
  return children.sort((a, b) => a - b);
}

/** Cores this process may run on. */
export function usableCores(): number {
  return availableParallelism();
}
