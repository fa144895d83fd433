// Slots in use of a max, with waiters: connection pools, thread pools, pgbouncer's server connections.
import type { ResourceStepFigures } from '../../../contract/index.ts';
import { inUseWords, waitWords } from './format.ts';
import type { ResourceKindRule } from './resource-kind-rule.ts';

/**
 * Full when at least `poolSaturatedPct` of the slots are in use and callers queued for
 * them: waiting at least one on average, or a wait time five times the first step's (and
 * over 1 ms), or callers refused. A pool that is busy but has no waiters is only busy.
 * Callers waiting at least one on average say it on their own (from three quarters in use, or where the
 * meters do not say how many are in use, as Debian's pgbouncer exporter): a caller waits only
 * when every slot is taken.
 */
/** With callers waiting at least one on average, a pool at least this % in use counts as full. */
const FULL_WHEN_WAITING_PCT = 75;

export const slotsRule: ResourceKindRule = {
  kind: 'slots',
  judge(now, base, baseStep, criteria) {
    // Callers waiting at least one on average say every slot was taken whenever they
    // waited, whatever once-a-second readings of "in use" averaged to (HikariCP behind a full
    // pgbouncer read 84 % in use with 6 waiting): from three quarters in use, that is full.
    const waitedForAll =
      now.waitingMean !== null &&
      now.waitingMean >= 1 &&
      (now.utilisationPct === null || now.utilisationPct >= FULL_WHEN_WAITING_PCT);
    const busy =
      (now.utilisationPct !== null && now.utilisationPct >= criteria.poolSaturatedPct) || waitedForAll;
    const queued =
      (now.waitingMean !== null && now.waitingMean >= 1) ||
      (now.waitMsMean !== null &&
        now.waitMsMean > 1 &&
        now.waitMsMean >= 5 * Math.max(base?.waitMsMean ?? 0, 0.2)) ||
      (now.refused ?? 0) > 0;
    return {
      figures: now,
      saturated: busy && queued,
      text: `${now.name} ${inUseWords(now, unitOf(now))}${waitWords(now, base, baseStep)}`,
    };
  },
  holdPerRequest(base, servedPerSec) {
    return holdOf(base, servedPerSec);
  },
};

/** What is counted: connections of a pool, threads of an executor. */
function unitOf(f: ResourceStepFigures): string {
  return f.role === 'threads' ? 'threads' : 'connections';
}

/**
 * Seconds a request held a slot at the first step: the meters' own hold time when they
 * give one (HikariCP's usage time: exact, where once-a-second readings of "in use" at a
 * low rate are mostly 0 or 1), else mean in use ÷ served (Little's Law, L = λ × W).
 */
function holdOf(base: ResourceStepFigures, servedPerSec: number): number | null {
  if (base.holdMsMean !== null && base.holdMsMean > 0) return base.holdMsMean / 1000;
  if (base.inUseMean === null || servedPerSec <= 0 || base.inUseMean <= 0) return null;
  return base.inUseMean / servedPerSec;
}
