// The CPU priority of a session on Linux kernels with sched_autogroup (sched(7), "The autogroup
// feature"): there every session is one scheduling group, CPU is shared between the groups
// first, and a process's own nice value only ranks it inside its session. A child started in a
// new session (`detached`) lands in a new group at nice 0, whatever its parent's priority.
import { readFileSync, writeFileSync } from 'node:fs';

/** The nice value of process `pid`'s autogroup; undefined where there is none to read. */
export function autogroupNice(pid: number | 'self' = 'self'): number | undefined {
  try {
    const match = /\snice\s+(-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Gives the session that process `pid` leads the nice value `nice`; false where it cannot
 * (no autogroups, the process gone, or a negative value without CAP_SYS_NICE).
 */
export function setAutogroupNice(pid: number, nice: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
    return true;
  } catch {
    return false;
  }
}
