// The thresholds the verdict judges by, their flags and their ranges.
import { type ConfigProblem, PlateauError, type VerdictCriteria } from '../../contract/index.ts';

/** The thresholds the verdict judges by unless told otherwise (see VerdictCriteria). */
export const DEFAULT_CRITERIA: Readonly<VerdictCriteria> = {
  followingShare: 0.9,
  poolSaturatedPct: 90,
  cpuSaturatedPct: 85,
  loopSaturated: 0.9,
  queryRise: 1.5,
};
/** A wait queue counts as empty below this time-weighted mean over a second. */
export const EMPTY_QUEUE_MEAN = 0.1;

/** The command-line flag, meaning and accepted range of each criterion. */
export const CRITERIA_FLAGS: Readonly<
  Record<keyof VerdictCriteria, { flag: string; says: string; min: number; max: number }>
> = {
  followingShare: { flag: '--following-share', says: 'served follows sent down to', min: 0.5, max: 1 },
  poolSaturatedPct: { flag: '--pool-saturated', says: 'pool saturated from % checked out', min: 1, max: 100 },
  cpuSaturatedPct: { flag: '--cpu-saturated', says: 'CPU-bound from % of one core', min: 1, max: 10_000 },
  loopSaturated: {
    flag: '--loop-saturated',
    says: 'event loop saturated from utilisation',
    min: 0.1,
    max: 1,
  },
  queryRise: { flag: '--query-rise', says: 'query time risen at p95 ×', min: 1, max: 100 },
};

/**
 * Criteria from command-line values (undefined = the default), each checked against its
 * range; every problem is reported at once, with the accepted range.
 */
export function parseCriteria(raw: Partial<Record<keyof VerdictCriteria, string>>): VerdictCriteria {
  const criteria: VerdictCriteria = { ...DEFAULT_CRITERIA };
  const problems: ConfigProblem[] = [];
  for (const key of Object.keys(CRITERIA_FLAGS) as (keyof VerdictCriteria)[]) {
    const text = raw[key];
    if (text === undefined) continue;
    const { flag, min, max } = CRITERIA_FLAGS[key];
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
      problems.push({
        setting: flag,
        message: `"${text}" is not accepted`,
        hint: `use a number from ${min} to ${max} (default ${DEFAULT_CRITERIA[key]})`,
      });
      continue;
    }
    criteria[key] = value;
  }
  if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'verdict criteria');
  return criteria;
}

/** How `criteria` differ from the defaults, in words (empty when they do not). */
export function criteriaChanges(criteria: VerdictCriteria): string[] {
  return (Object.keys(CRITERIA_FLAGS) as (keyof VerdictCriteria)[])
    .filter((key) => criteria[key] !== DEFAULT_CRITERIA[key])
    .map((key) => `${CRITERIA_FLAGS[key].says} ${criteria[key]} (default ${DEFAULT_CRITERIA[key]})`);
}
