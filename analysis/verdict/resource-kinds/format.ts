// Words shared by the resource kinds' rules.
import type { ResourceStepFigures } from '../../../contract/index.ts';
import { fmt } from '../format.ts';

/** `4 of 4 in use (100%)`, or the mean alone when the capacity is unknown. */
export function inUseWords(f: ResourceStepFigures, unit: string): string {
  if (f.inUseMean === null) return `${unit} in use unknown`;
  if (f.capacity === null) return `${fmt(f.inUseMean)} ${unit} in use (capacity unknown)`;
  return `${fmt(f.inUseMean)} of ${fmt(f.capacity)} ${unit} in use (${fmt(f.utilisationPct ?? 0, 0)}%)`;
}

/** `, waiting mean 12, max 20, wait 310 ms (2 ms at r020), 5 refused`: the figures the meters gave. */
export function waitWords(
  f: ResourceStepFigures,
  base: ResourceStepFigures | undefined,
  baseStep: string,
): string {
  const parts: string[] = [];
  if (f.waitingMean !== null) parts.push(`waiting mean ${fmt(f.waitingMean)}, max ${fmt(f.waitingMax ?? 0)}`);
  if (f.waitMsMean !== null)
    parts.push(
      `wait ${fmt(f.waitMsMean)} ms${base?.waitMsMean != null ? ` (${fmt(base.waitMsMean)} ms at ${baseStep})` : ''}`,
    );
  if (f.refused) parts.push(`${fmt(f.refused, 0)} refused or timed out`);
  return parts.length > 0 ? `, ${parts.join(', ')}` : '';
}
