// CPU: cores busy of the cores a process (or the database) may use.
import { fmt } from '../format.ts';
import type { ResourceKindRule } from './resource-kind-rule.ts';

/** Full from `cpuSaturatedPct` % of its cores busy (the same share as plateau's own CPU rule). */
export const cpuRule: ResourceKindRule = {
  kind: 'cpu',
  judge(now, base, baseStep, criteria) {
    const pct = now.utilisationPct;
    const busy = now.inUseMean;
    const cores = now.capacity !== null ? ` of ${fmt(now.capacity)}` : '';
    return {
      figures: now,
      saturated: pct !== null && pct >= criteria.cpuSaturatedPct,
      text: `${now.name} ${busy === null ? 'unknown' : `${fmt(busy, 2)}${cores} cores busy`}${pct !== null ? ` (${fmt(pct, 0)}%)` : ''}${base?.utilisationPct != null ? ` (${fmt(base.utilisationPct, 0)}% at ${baseStep})` : ''}`,
    };
  },
  holdPerRequest(base, servedPerSec) {
    if (base.inUseMean === null || base.inUseMean <= 0 || servedPerSec <= 0) return null;
    return base.inUseMean / servedPerSec;
  },
};
