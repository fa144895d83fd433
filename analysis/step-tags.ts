// What a step tag says (scripts/lib/steps.ts writes them).

/** Seconds after the ramp tagged `drain` (scripts/lib/steps.ts DRAIN_SECONDS). */
export const DRAIN_SECONDS = 5;

/** The target rate named by a step tag: `r020` → 20, `r002.5` → 2.5; otherwise null. */
export function offeredFromTag(step: string): number | null {
  const match = /^r(\d+(?:\.\d+)?)$/.exec(step);
  return match ? Number(match[1]) : null;
}

/** The clients named by a closed-model step tag: `c008` → 8; otherwise null. */
export function clientsFromTag(step: string): number | null {
  const match = /^c(\d+)$/.exec(step);
  return match ? Number(match[1]) : null;
}
