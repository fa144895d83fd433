// What to scale on, and what a CPU-targeted autoscaler would do at the plateau.
import type { Verdict } from '../../contract/index.ts';
import { fmt } from './format.ts';
import type { PlateauFound } from './plateau.ts';
import type { LimitFinding } from './steps-limit.ts';

/** The utilisation a CPU-targeted autoscaler is commonly set to hold (Kubernetes HPA examples use 50–80 %). */
export const CPU_TARGET_PCT = 70;

/**
 * The signal to scale on: the first limit's own saturation (its waiting, wait time or
 * queue), since a limit that is not the CPU does not show in CPU. And, when the CPU is
 * not the limit, what an autoscaler holding CPU at CPU_TARGET_PCT would do at the plateau
 * with one replica: `ceil(replicas × current ÷ target)`.
 */
export function scalingOf(limit: LimitFinding, found: PlateauFound): Verdict['scaling'] {
  const signal = signalOf(limit);
  if (signal === null) return null;
  if (limit.resource === 'cpu') return { signal, cpuAutoscaler: null };
  const cpuPct = cpuAtPlateau(found);
  if (cpuPct === null) return { signal, cpuAutoscaler: null };
  const desired = Math.ceil((1 * cpuPct) / CPU_TARGET_PCT);
  const cpuAutoscaler =
    desired <= 1
      ? `a CPU-targeted autoscaler (target ${CPU_TARGET_PCT}%) sees ${fmt(cpuPct, 0)}% at the plateau and keeps ceil(1 × ${fmt(cpuPct, 0)} ÷ ${CPU_TARGET_PCT}) = 1 replica: it would not scale out while requests wait for the ${limit.name ?? limit.resource}`
      : `a CPU-targeted autoscaler (target ${CPU_TARGET_PCT}%) sees ${fmt(cpuPct, 0)}% at the plateau and asks for ceil(1 × ${fmt(cpuPct, 0)} ÷ ${CPU_TARGET_PCT}) = ${desired} replicas, for CPU, not for the ${limit.name ?? limit.resource} that is full`;
  return { signal, cpuAutoscaler };
}

function signalOf(limit: LimitFinding): string | null {
  switch (limit.resource) {
    case 'pool':
    case 'threads':
      return limit.name
        ? `${limit.name}: its waiting callers and wait time (not CPU)`
        : 'the pool: requests waiting for a connection and their wait (db_pool_waiting_requests), not CPU';
    case 'queue':
      return `${limit.name ?? 'the queue'}: its depth against its cap`;
    case 'database':
      return limit.name
        ? `${limit.name}: backends waiting, by wait event`
        : "the database's time per query and its waits, not the service's CPU";
    case 'cpu':
      return `${limit.name ?? 'the CPU'}: CPU utilisation (a CPU-targeted autoscaler fits this limit)`;
    case 'admission':
      return "the admission gate's refusals (503, reason admission) and its busy time";
    default:
      return null;
  }
}

/** CPU % at the plateau: plateau's own figure (% of one core), else the busiest published CPU of the service (not the database's, position 3). */
function cpuAtPlateau(found: PlateauFound): number | null {
  const own = found.row.server?.cpuPct;
  if (own !== undefined && own !== null) return own;
  const cpus = (found.row.resources ?? []).filter(
    (r) => r.kind === 'cpu' && r.position < 3 && r.utilisationPct !== null,
  );
  if (cpus.length === 0) return null;
  return Math.max(...cpus.map((r) => r.utilisationPct!));
}
