// A bounded (or unbounded) queue: its depth of its cap.
import { fmt } from '../format.ts';
import type { ResourceKindRule } from './resource-kind-rule.ts';

/**
 * Full when its depth reached its cap (or it refused work); an unbounded queue, which is
 * never full, counts as saturated when its mean depth is at least one and five times the
 * first step's: it is growing, and what waits in it is the excess.
 */
export const queueRule: ResourceKindRule = {
  kind: 'queue',
  judge(now, base, baseStep) {
    const depth = now.inUseMean ?? 0;
    const full =
      now.capacity !== null && now.capacity > 0
        ? (now.inUseMax ?? 0) >= now.capacity
        : depth >= 1 && depth >= 5 * Math.max(base?.inUseMean ?? 0, 0.2);
    const cap = now.capacity !== null ? ` of ${fmt(now.capacity)}` : ' (unbounded)';
    return {
      figures: now,
      saturated: full || (now.refused ?? 0) > 0,
      text: `${now.name} depth mean ${fmt(depth)}, max ${fmt(now.inUseMax ?? 0)}${cap}${base?.inUseMean != null ? ` (${fmt(base.inUseMean)} at ${baseStep})` : ''}${now.refused ? `, ${fmt(now.refused, 0)} refused` : ''}`,
    };
  },
  holdPerRequest() {
    return null;
  },
};
