// The verdict: where served throughput stopped following offered load, and why. Each part
// is a rule of its own under verdict/ (plateau, first limit per resource kind, Little's Law,
// safe limit, overload, recovery, scaling); this file puts them in order.
import type { SaturationRow, Verdict } from '../contract/index.ts';
import { databaseOutageNotes, isDatabaseOutageRow } from './database-outage.ts';
import { fitKnee } from './fit/knee.ts';
import { repeatOf } from './step-tags.ts';
import { criteriaChanges, DEFAULT_CRITERIA } from './verdict/criteria.ts';
import { firstLimitOf } from './verdict/first-limit.ts';
import { fmt } from './verdict/format.ts';
import type { VerdictInputs } from './verdict/inputs.ts';
import { littlesLawChecksOf, poolLittlesLaw } from './verdict/littles-law.ts';
import { predictCeilings, predictionFinding } from './verdict/meter-limit.ts';
import { meterTimeline } from './verdict/meter-timeline.ts';
import { NEXT_LIMIT } from './verdict/next-limit.ts';
import { collapseOf, overloadOf } from './verdict/overload.ts';
import { findPlateau } from './verdict/plateau.ts';
import { recoveryFrom } from './verdict/recovery.ts';
import { judgeRepeats } from './verdict/repeats.ts';
import { passedAtPlateau, safeStepOf } from './verdict/safe-limit.ts';
import { scalingOf } from './verdict/scaling.ts';
import { type LimitFinding, stepsCeilings } from './verdict/steps-limit.ts';

export {
  CRITERIA_FLAGS,
  criteriaChanges,
  DEFAULT_CRITERIA,
  EMPTY_QUEUE_MEAN,
  parseCriteria,
} from './verdict/criteria.ts';
export type { VerdictInputs } from './verdict/inputs.ts';

/**
 * Decides the verdict from the saturation table: the plateau (the first rate step whose
 * served rate falls below 90 % of what the client sent), the first limit (the resource
 * that saturated there: plateau's own pool, CPU, database or admission gate, or one the
 * service publishes; the generator when the row is invalid; "unlisted" when none did),
 * the evidence, the predicted ceilings, Little's Law, the safe limit, overload, recovery,
 * database slots, what to scale on and what to watch next; and the knee of served against
 * offered fitted to the valid rate steps (analysis/fit/knee.ts).
 */
export function decideVerdict(inputs: VerdictInputs): Verdict {
  const { rows, settings, objectives } = inputs;
  const criteria = inputs.criteria ?? DEFAULT_CRITERIA;
  const notes: string[] = [];
  const changed = criteriaChanges(criteria);
  if (changed.length > 0) notes.push(`judged by criteria other than the defaults: ${changed.join('; ')}`);
  // A step the run ended during is not evidence of anything: it is left out of every rule.
  // So is a step the database was away for: what it served was the outage's doing, and a
  // plateau read from it would name a resource for something that is not a capacity limit.
  const outageRows = rows.filter((r) => r.offeredPerSec !== null && !r.cutShort && isDatabaseOutageRow(r));
  const standingRows = rows.filter((r) => r.offeredPerSec !== null && !r.cutShort && !isDatabaseOutageRow(r));
  // The first pass climbs; the repeats of its decisive steps (`r070b`) run later, after a
  // step past the plateau or a low one, and are judged beside their first run, not as
  // steps of the climb (a repeat below the plateau after it is not "served following again").
  const rateRows = standingRows.filter((r) => repeatOf(r.step) === null);
  const repeatRows = standingRows.filter((r) => repeatOf(r.step) !== null);
  notes.push(...databaseOutageNotes(inputs.timeline, rows));
  const ended = inputs.ended ?? null;
  const hasServer = rateRows.some((r) => r.server !== null);
  const hasResources = rateRows.some((r) => (r.resources?.length ?? 0) > 0);
  if (!hasServer && !hasResources)
    notes.push(
      'no server side (GET /steps or published meters): resources are not attributed, only the client side is analysed',
    );
  if (rateRows.length === 0 && outageRows.length === 0 && !ended)
    notes.push('no rate steps (r<rate> tags): no plateau can be found');

  const found = findPlateau(rateRows, criteria);
  // Ceilings predicted from the steps below the plateau (all of them without one; the first
  // when the plateau is the first step).
  const below = (found ? rateRows.slice(0, found.index) : rateRows).filter((r) => !r.invalid);
  const predictFrom = below.length > 0 ? below : rateRows.slice(0, 1);
  const ceilings = [...stepsCeilings(predictFrom, settings), ...predictCeilings(predictFrom)].sort(
    (a, b) => a.ceilingPerSec - b.ceilingPerSec,
  );
  const limit: LimitFinding = found
    ? firstLimitOf({ ...inputs, criteria }, found, ceilings, notes)
    : ended
      ? { resource: 'inconclusive', summary: unknownLimit(ended, rateRows), saturated: [], flat: [] }
      : {
          resource: 'none',
          summary:
            rateRows.length > 0
              ? `no plateau within the steps run (served followed offered up to ${rateRows.at(-1)!.offeredPerSec}/s)${leftOutWords(outageRows)}`
              : outageRows.length > 0
                ? 'no plateau can be read: the database was unreachable during every rate step'
                : 'no rate steps',
          saturated: [],
          flat: [],
        };
  const collapse = found ? collapseOf(found.beyond, found.servedPerSec) : { collapsed: false, words: '' };

  const poolMax = settings?.poolMax ?? null;
  const littlesLaw =
    found && poolMax && hasServer
      ? poolLittlesLaw(
          found,
          poolMax,
          settings?.queueMax ?? null,
          limit.resource === 'pool' && !limit.name,
          collapse.collapsed,
        )
      : null;
  if (littlesLaw?.disagreement) notes.push(`Little's Law disagrees: ${littlesLaw.disagreement}`);

  const safe = safeStepOf(
    rateRows,
    objectives,
    found ? { index: found.index, servedPerSec: found.servedPerSec } : null,
  );
  const repeats = judgeRepeats({
    firstPass: rateRows,
    repeats: repeatRows,
    plateau: found ? { index: found.index } : null,
    safe,
    objectives,
    followingShare: criteria.followingShare,
  });
  const tooClose = found ? passedAtPlateau(rateRows, objectives, safe) : undefined;
  if (tooClose && found) {
    notes.push(
      `${tooClose.step} met the objectives (p95 ${fmt(tooClose.latencyMs.p95)} ms) but is not quoted as safe: it is at or above the plateau of ${fmt(found.servedPerSec)}/s, where any burst queues`,
    );
  }
  // Recovery, from the server's per-second timeline (or, for a service without one, the first
  // limit's own published series), judged against the recovery rate's own level.
  const timeline =
    inputs.timeline.length > 0 ? inputs.timeline : meterTimeline(inputs.resources, limit.name, rows);
  const timed = { ...inputs, timeline };
  const recovery = recoveryFrom(timed, rows, objectives.p95Ms, notes);
  const { overload, backlog } = found
    ? overloadOf(timed, found.beyond, found.servedPerSec, collapse, recovery)
    : {
        overload: ended
          ? 'not known: the run ended before a step went past a plateau'
          : 'not reached: no step went past the plateau',
        backlog: null,
      };
  if (backlog?.drainPredicted) {
    notes.push(
      'the backlog had not drained when the run ended: the drain time is a prediction, backlog ÷ (plateau − recovery rate)',
    );
  }
  const littlesLawChecks = littlesLawChecksOf(rows.filter((r) => !isDatabaseOutageRow(r)));
  for (const check of littlesLawChecks.filter((c) => c.steady && !c.agrees)) {
    notes.push(
      `Little's Law disagrees at ${check.step} (${check.where}): ${fmt(check.measured)} in flight measured, ${fmt(check.predicted)} predicted (served × mean latency): check the instrumentation`,
    );
  }

  return {
    plateau: found
      ? {
          step: found.row.step,
          servedPerSec: found.servedPerSec,
          offeredPerSec: found.row.offeredPerSec!,
          ...(repeats?.plateau.stable === false ? { unstable: repeats.plateau.words } : {}),
        }
      : null,
    firstLimit: {
      resource: limit.resource,
      summary: limit.summary,
      ...(limit.name !== undefined ? { name: limit.name } : {}),
    },
    // The knee fitted to every step that stands as evidence, beside the plateau the rule read.
    knee:
      rateRows.length > 0
        ? fitKnee(
            rateRows
              .filter((r) => !r.invalid)
              .map((r) => ({ offeredPerSec: r.offeredPerSec!, servedPerSec: r.servedPerSec })),
          )
        : null,
    evidence: { saturated: limit.saturated, flat: limit.flat },
    ...(ceilings.length > 0
      ? {
          prediction: {
            ceilings,
            finding:
              ended && !found
                ? `predicted first: ${ceilings[0]!.name} at ${fmt(ceilings[0]!.ceilingPerSec)}/s; the run ended before any plateau, so the prediction was not tested`
                : predictionFinding(ceilings, found?.servedPerSec ?? null, namedLimit(limit)),
          },
        }
      : {}),
    scaling: found ? scalingOf(limit, found) : null,
    littlesLaw,
    safeLimit:
      repeats?.safeLimit.stable === false
        ? // Its step met the objectives once and not the second time: no figure is written down.
          { ...safeLimitOf(undefined, inputs.jittered === true), unstable: repeats.safeLimit.words }
        : {
            ...safeLimitOf(safe, inputs.jittered === true),
            // Every step that stands met the objectives: the steps above were never judged.
            ...(ended && safe && safe === rateRows.at(-1) ? { atLeast: true } : {}),
          },
    ...(repeats ? { repeats } : {}),
    overload,
    backlog,
    recovery,
    database: databaseSlots(inputs, poolMax),
    littlesLawChecks,
    nextLimit:
      ended && !found
        ? `not known until a study runs to its end (this one ended during ${ended.atStep ?? 'its start'}: ${ended.detail})`
        : NEXT_LIMIT[limit.resource],
    notes,
  };
}

/** The first limit of a run that ended before any plateau: what is known, and what is not. */
function unknownLimit(ended: NonNullable<VerdictInputs['ended']>, rateRows: SaturationRow[]): string {
  const standing = rateRows.filter((r) => !r.invalid);
  const where = ended.atStep ? ` during ${ended.atStep}` : '';
  if (standing.length === 0)
    return `not known: the run ended${where} (${ended.detail}) before any step stood`;
  return `not known: the run ended${where} (${ended.detail}); served followed offered up to ${standing.at(-1)!.offeredPerSec}/s, the last step that stands`;
}

/** `; r040 and r060 left out: the database was unreachable during them`, or '' without such rows. */
function leftOutWords(outageRows: SaturationRow[]): string {
  if (outageRows.length === 0) return '';
  const steps = outageRows.map((r) => r.step);
  const list = steps.length === 1 ? steps[0] : `${steps.slice(0, -1).join(', ')} and ${steps.at(-1)}`;
  return `; ${list} left out: the database was unreachable during ${steps.length === 1 ? 'it' : 'them'}`;
}

/** The first limit's name as the ceilings name it (`pool`, `cpu` for plateau's own), or undefined when none was named. */
function namedLimit(limit: LimitFinding): string | undefined {
  if (limit.name !== undefined) return limit.name;
  return limit.resource === 'pool' || limit.resource === 'cpu' ? limit.resource : undefined;
}

function safeLimitOf(safe: SaturationRow | undefined, jittered: boolean): Verdict['safeLimit'] {
  return {
    ratePerSec: safe?.offeredPerSec ?? null,
    step: safe?.step ?? null,
    p95Ms: safe?.latencyMs.p95 ?? null,
    failureRate: safe?.failureRate ?? null,
    jittered,
    fromRun: null,
  };
}

/** How many replicas of this pool the database's ordinary connection slots allow. */
function databaseSlots(inputs: VerdictInputs, poolMax: number | null): Verdict['database'] {
  if (!inputs.database) return null;
  const slots = inputs.database.ordinarySlots;
  const replicas = poolMax ? Math.floor(slots / poolMax) : null;
  return {
    ordinarySlots: slots,
    maxReplicas: replicas,
    summary: `replicas x pool max <= ${slots} slots${poolMax ? ` (at most ${replicas} replicas of pool ${poolMax})` : ''}`,
  };
}
