// The first limit from the resources a service publishes (HikariCP, executors, pgbouncer, CPU…).
import type {
  LimitResource,
  PredictedCeiling,
  ResourceStepFigures,
  SaturationRow,
  VerdictCriteria,
} from '../../contract/index.ts';
import { fmt } from './format.ts';
import type { PlateauFound } from './plateau.ts';
import { RESOURCE_KIND_RULES, type ResourceJudgement } from './resource-kinds/index.ts';
import type { LimitFinding } from './steps-limit.ts';

/**
 * Two saturated resources whose predicted ceilings are within this share of each other
 * are too close to tell apart by prediction: the deeper one on the request path is named
 * (its callers' holders wait on it), and the record says both were full.
 */
const CEILINGS_TIE = 0.1;

/** Every resource of a row judged against the first rate step's figures of the same resource. */
export function judgeResources(
  row: SaturationRow,
  baseline: SaturationRow,
  criteria: VerdictCriteria,
): ResourceJudgement[] {
  const base = new Map((baseline.resources ?? []).map((f) => [f.id, f]));
  return (row.resources ?? []).map((f) =>
    RESOURCE_KIND_RULES[f.kind].judge(f, base.get(f.id), baseline.step, criteria),
  );
}

/**
 * Each resource's ceiling predicted by Little's Law from the steps below the plateau (`rows`):
 * capacity ÷ what one request held of it, the hold averaged over those steps weighted by the
 * requests each served (a once-a-second reading of "in use" is a sample: one step of a few
 * seconds at a low rate is mostly 0s and 1s). Lowest first; resources whose figures give no
 * hold time (queues, unknown capacity, nothing served) are left out.
 */
export function predictCeilings(rows: SaturationRow[]): PredictedCeiling[] {
  const byId = new Map<string, { last: ResourceStepFigures; holdTimesServed: number; served: number }>();
  for (const row of rows) {
    const served = row.servedPerSec * row.seconds;
    for (const f of row.resources ?? []) {
      // The database's connection slots are held by pools for as long as the pools live, not
      // per request: they bound connections, not throughput.
      if (f.role === 'database' && f.kind === 'slots') continue;
      const hold = RESOURCE_KIND_RULES[f.kind].holdPerRequest(f, row.servedPerSec);
      const entry = byId.get(f.id) ?? { last: f, holdTimesServed: 0, served: 0 };
      entry.last = f;
      if (hold !== null && hold > 0 && served > 0) {
        entry.holdTimesServed += hold * served;
        entry.served += served;
      }
      byId.set(f.id, entry);
    }
  }
  const ceilings: PredictedCeiling[] = [];
  for (const { last, holdTimesServed, served } of byId.values()) {
    if (served <= 0 || last.capacity === null || last.capacity <= 0) continue;
    const hold = holdTimesServed / served;
    ceilings.push({
      name: last.name,
      role: last.role,
      capacity: last.capacity,
      holdSecondsPerRequest: Math.round(hold * 1e6) / 1e6,
      ceilingPerSec: Math.round((last.capacity / hold) * 10) / 10,
    });
  }
  return ceilings.sort((a, b) => a.ceilingPerSec - b.ceilingPerSec);
}

/**
 * The first limit among the published resources at the plateau. Of those full there (or at
 * the next valid step, when the knee's step was only partly past the limit): the one with
 * the lowest predicted ceiling, since the others filled because its callers held them
 * while they waited on it (threads waiting for connections) or because it slowed them (a
 * saturated CPU stretches every hold time); where ceilings are unknown or within
 * CEILINGS_TIE of each other, the deepest on the request path. `unlisted` when none was
 * full; null when the rows carry no published resources.
 */
export function meterLimit(
  found: PlateauFound,
  criteria: VerdictCriteria,
  ceilings: PredictedCeiling[],
): LimitFinding | null {
  const { row, beyond, baseline, servedPerSec } = found;
  if (!row.resources || row.resources.length === 0) return null;
  const next = beyond.slice(1).find((r) => !r.invalid && r.resources && r.resources.length > 0);
  const atPlateau = judgeResources(row, baseline, criteria);
  const judged =
    !atPlateau.some((j) => j.saturated) && next ? judgeResources(next, baseline, criteria) : atPlateau;
  const full = judged.filter((j) => j.saturated);
  if (full.length === 0) {
    return {
      resource: 'unlisted',
      summary: `throughput flattened at ${fmt(servedPerSec)}/s but none of the ${judged.length} resources read from the service's meters was full: the bottleneck is off the list`,
      saturated: [],
      flat: judged.map((j) => j.text),
    };
  }
  const ceilingOf = new Map(ceilings.map((c) => [c.name, c.ceilingPerSec]));
  const first = [...full].sort((a, b) =>
    compareCandidates(a.figures, b.figures, ceilingOf, servedPerSec),
  )[0]!;
  const others = full.filter((j) => j !== first);
  const saturated = [first.text, ...others.map((j) => `also full: ${j.text}`)];
  const flat = judged.filter((j) => !j.saturated).map((j) => j.text);
  return {
    resource: limitOf(first.figures),
    name: first.figures.name,
    summary: `${first.figures.name}, ${fmt(servedPerSec)} served/s`,
    saturated,
    flat,
  };
}

/**
 * Queues last: a queue is where the excess waits for what drains it (its workers, their
 * pool, the CPU), so it is named only when nothing that serves was full. Then the lower
 * predicted ceiling; within CEILINGS_TIE of each other, a full CPU before what it slows, else
 * the deeper on the request path. Where only one of the two has a ceiling, and that ceiling is
 * the plateau itself (within CEILINGS_TIE of `servedPerSec`), it explains the plateau and is
 * named: a thread pool whose meters give no hold time fills too when every thread waits for a
 * saturated CPU, and naming it would send the reader to add threads to a machine with no CPU
 * left.
 */
function compareCandidates(
  a: ResourceStepFigures,
  b: ResourceStepFigures,
  ceilingOf: Map<string, number>,
  servedPerSec: number,
): number {
  if ((a.kind === 'queue') !== (b.kind === 'queue')) return a.kind === 'queue' ? 1 : -1;
  const ca = ceilingOf.get(a.name);
  const cb = ceilingOf.get(b.name);
  const oneIsCpu = (a.kind === 'cpu') !== (b.kind === 'cpu');
  if (ca !== undefined && cb !== undefined) {
    if (Math.abs(ca - cb) > CEILINGS_TIE * Math.min(ca, cb)) return ca - cb;
    // A tie with a full CPU: the other's hold time is mostly waiting for the CPU.
    if (oneIsCpu) return a.kind === 'cpu' ? -1 : 1;
    return b.position - a.position;
  }
  const explainsPlateau = (ceiling: number | undefined) =>
    ceiling !== undefined && Math.abs(ceiling - servedPerSec) <= CEILINGS_TIE * servedPerSec;
  if (explainsPlateau(ca) && cb === undefined) return -1;
  if (explainsPlateau(cb) && ca === undefined) return 1;
  if (ca !== undefined && cb === undefined && b.kind === 'cpu') return -1;
  if (cb !== undefined && ca === undefined && a.kind === 'cpu') return 1;
  // A full CPU with a ceiling before a resource without one: slots fill too when their
  // holders wait for a saturated CPU (the ceiling predicted from the quiet steps runs a little
  // high, as CPU per request grows with contention), and more of them would not serve more.
  if (oneIsCpu && (a.kind === 'cpu' ? ca : cb) !== undefined) return a.kind === 'cpu' ? -1 : 1;
  // A CPU is shared by everything on the path: without any ceiling, a full resource that is
  // not the CPU is the more specific answer.
  if (oneIsCpu) return a.kind === 'cpu' ? 1 : -1;
  return b.position - a.position;
}

/** The verdict's word for a resource's role. */
function limitOf(f: ResourceStepFigures): LimitResource {
  return f.role;
}

/**
 * Whether the run bore the prediction out, in words: the first limit named against the
 * lowest predicted ceiling; with none named, a plateau far below every ceiling is a
 * finding of its own (something unlisted binds first).
 */
export function predictionFinding(
  ceilings: PredictedCeiling[],
  plateauServed: number | null,
  firstLimitName: string | undefined,
): string {
  if (ceilings.length === 0) return 'no resource gave a hold time at the first step: nothing predicted';
  const lowest = ceilings[0]!;
  const predicted = `predicted first: ${lowest.name} at ${fmt(lowest.ceilingPerSec)}/s`;
  if (plateauServed === null)
    return `${predicted}; no plateau within the steps run, so the prediction was not tested`;
  const ratio = plateauServed / lowest.ceilingPerSec;
  const found = `${fmt(plateauServed)}/s (${fmt(ratio * 100, 0)}% of the prediction)`;
  if (firstLimitName === lowest.name) return `${predicted}; the run found it at ${found}`;
  if (firstLimitName !== undefined) {
    const named = ceilings.find((c) => c.name === firstLimitName);
    // Without a ceiling of its own (meters with no hold time: Debian's pgbouncer exporter has
    // no servers in use) the named limit was never predicted: nothing about hold times follows.
    if (!named)
      return `${predicted}, but ${firstLimitName} was full first, at ${fmt(plateauServed)}/s: its meters give no hold time, so it had no predicted ceiling`;
    return `${predicted}, but ${firstLimitName} (predicted ${fmt(named.ceilingPerSec)}/s) was full first, at ${fmt(plateauServed)}/s: the hold times changed under load`;
  }
  if (ratio < 0.75)
    return `${predicted}, but served flattened at ${fmt(plateauServed)}/s, ${fmt((1 - ratio) * 100, 0)}% below every predicted ceiling: something unlisted binds first`;
  return `${predicted}; the run flattened at ${found} with nothing listed full`;
}
