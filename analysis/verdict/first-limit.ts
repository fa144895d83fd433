// The first limit: the generator, a shortage of VUs, or the resource that saturated at the plateau.
import type { Verdict } from '../../contract/index.ts';
import { GENERATOR_LIMITS } from '../saturation-table.ts';
import { fmt } from './format.ts';
import type { VerdictInputs } from './inputs.ts';
import { meterLimit } from './meter-limit.ts';
import type { PlateauFound } from './plateau.ts';
import { type LimitFinding, stepsLimit } from './steps-limit.ts';

/**
 * The first limit at a plateau. A row that is not evidence names the generator (its CPU or
 * lag) or is inconclusive (too few VUs). Otherwise plateau's own `GET /steps` figures
 * decide when they name a resource; the resources the service publishes decide when they
 * do not (or there are none), and are evidence beside them when they do.
 */
export function firstLimitOf(
  inputs: VerdictInputs & { criteria: NonNullable<VerdictInputs['criteria']> },
  found: PlateauFound,
  ceilings: NonNullable<Verdict['prediction']>['ceilings'],
  notes: string[],
): LimitFinding {
  const { row } = found;
  if (row.invalid && generatorCouldNotKeepUp(row)) {
    return {
      resource: 'generator',
      summary: `the load generator, not the service: ${row.invalid}`,
      saturated: [row.invalid],
      flat: [],
    };
  }
  if (row.invalid) {
    // Drops with a healthy generator: it was given too few VUs. That says nothing about
    // the service, and nothing against the generator either.
    return {
      resource: 'inconclusive',
      summary: `inconclusive: ${row.step} dropped ${row.dropped} starts because every VU was busy${inputs.vusMax ? ` (vus_max ${inputs.vusMax})` : ''}, so the service was not given that load; rerun with more VUs (plateau run sizes them and reruns by itself)`,
      saturated: [row.invalid],
      flat: [],
    };
  }
  const steps = stepsLimit(found, inputs.settings, inputs.criteria, notes);
  const meters = meterLimit(found, inputs.criteria, ceilings);
  if (!meters) {
    return (
      steps ?? {
        resource: 'unlisted',
        summary: `throughput flattened at ${fmt(found.servedPerSec)}/s; without the server side the resource is unknown`,
        saturated: [],
        flat: [],
      }
    );
  }
  if (!steps) return meters;
  // plateau's own figures decide when they name a resource; the published ones are
  // evidence beside them, and decide when plateau's own found nothing full.
  if (steps.resource !== 'unlisted' || meters.resource === 'unlisted') {
    return {
      ...steps,
      saturated: [...steps.saturated, ...meters.saturated],
      flat: [...steps.flat, ...meters.flat],
    };
  }
  return { ...meters, flat: [...meters.flat, ...steps.flat] };
}

/** Whether a row's trouble is the generator's own (CPU or lag), not a shortage of VUs. */
function generatorCouldNotKeepUp(row: PlateauFound['row']): boolean {
  const { lagMsMax, cpuPctMax } = row.generator;
  return (
    (lagMsMax !== null && lagMsMax > GENERATOR_LIMITS.lagMs) ||
    (cpuPctMax !== null && cpuPctMax >= GENERATOR_LIMITS.cpuPct)
  );
}
