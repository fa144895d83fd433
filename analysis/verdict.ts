// The verdict: where served throughput stopped following offered load, and why.
import type {
  DatabaseInfo,
  LimitResource,
  SaturationRow,
  ServiceSettings,
  TimelinePoint,
  Verdict,
  VerdictCriteria,
} from '../contract/index.ts';
import { type ConfigProblem, PlateauError } from '../contract/index.ts';
import { totalFailures } from './client-steps.ts';
import { GENERATOR_LIMITS } from './saturation-table.ts';

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

export interface VerdictInputs {
  rows: SaturationRow[];
  settings: ServiceSettings | null;
  timeline: TimelinePoint[];
  objectives: { p95Ms: number; failRate: number };
  database: DatabaseInfo | null;
  recoveryRatePerSec: number | null;
  /** Whether this run's arrivals were jittered. */
  jittered?: boolean;
  /** Client p95 per epoch second after the ramp; recovery also waits for it to meet the objective. */
  clientP95MsBySecond?: Map<number, number>;
  /** The thresholds to judge by (default DEFAULT_CRITERIA). */
  criteria?: VerdictCriteria;
  /** The most VUs the generator had initialised (`vus_max`), when its output says. */
  vusMax?: number | null;
  /** The client's requests in flight at an epoch second of the client's clock. */
  clientInFlightAt?: (atS: number) => number;
  /** Epoch s (client clock) where the ramp ended and where the load stopped, when known. */
  clientRampEndS?: number | null;
  clientLoadEndS?: number | null;
  /** Server clock minus client clock, s (0 when unknown): shifts client seconds onto the timeline. */
  clockOffsetS?: number;
}

const fmt = (x: number, digits = 1) => String(Math.round(x * 10 ** digits) / 10 ** digits);

/**
 * Decides the verdict from the saturation table: the plateau (the first rate step whose
 * served rate falls below 90 % of what the client sent), the first limit (the column that saturated
 * there: pool, CPU, database; the generator when the row is invalid; "unlisted" when none
 * did), the evidence, Little's Law, the safe limit, overload, recovery, database slots and
 * what to watch next.
 */
export function decideVerdict(inputs: VerdictInputs): Verdict {
  const { rows, settings, objectives } = inputs;
  const criteria = inputs.criteria ?? DEFAULT_CRITERIA;
  const notes: string[] = [];
  const changed = criteriaChanges(criteria);
  if (changed.length > 0) notes.push(`judged by criteria other than the defaults: ${changed.join('; ')}`);
  const rateRows = rows.filter((r) => r.offeredPerSec !== null);
  const hasServer = rateRows.some((r) => r.server !== null);
  if (!hasServer)
    notes.push('no server side (GET /steps): resources are not attributed, only the client side is analysed');
  if (rateRows.length === 0) notes.push('no rate steps (r<rate> tags): no plateau can be found');

  // Served follows the load the client actually sent (a step's average includes its ramp
  // from the previous rate, so it is below the step's target even when nothing is wrong).
  const plateauIndex = rateRows.findIndex((r) => r.servedPerSec < criteria.followingShare * r.sentPerSec);
  const plateauRow = plateauIndex >= 0 ? rateRows[plateauIndex]! : undefined;
  const beyond = plateauIndex >= 0 ? rateRows.slice(plateauIndex) : [];
  // The served rate the service holds: the best any valid rate step reached (the knee's
  // step often serves a little more than the overloaded ones after it).
  const plateauServed = plateauRow
    ? Math.max(plateauRow.servedPerSec, ...rateRows.filter((r) => !r.invalid).map((r) => r.servedPerSec))
    : 0;
  const plateau = plateauRow
    ? { step: plateauRow.step, servedPerSec: plateauServed, offeredPerSec: plateauRow.offeredPerSec! }
    : null;
  const baseline = rateRows[0];
  const knee = plateauIndex > 0 ? rateRows[plateauIndex - 1] : undefined;

  // First limit and evidence.
  let resource: LimitResource = 'none';
  let summary =
    rateRows.length > 0
      ? `no plateau within the steps run (served followed offered up to ${rateRows.at(-1)!.offeredPerSec}/s)`
      : 'no rate steps';
  const saturated: string[] = [];
  const flat: string[] = [];
  if (plateauRow) {
    const b = baseline?.server;
    // The knee step is often only partly past the limit (its ramp from the previous rate,
    // and jittered arrivals smeared across its start): when nothing listed saturated there,
    // the evidence is read at the next valid step past it.
    const next = beyond.slice(1).find((r) => !r.invalid && r.server);
    const saturatesAt = (r: SaturationRow | undefined) => {
      if (!r?.server || !b) return false;
      const j = judgeRow(r.server, b, settings, criteria);
      return j.poolFull || j.cpuFull || j.queryRose;
    };
    const evidenceRow = !saturatesAt(plateauRow) && saturatesAt(next) ? next! : plateauRow;
    const s = evidenceRow.server;
    if (plateauRow.invalid && generatorCouldNotKeepUp(plateauRow)) {
      resource = 'generator';
      summary = `the load generator, not the service: ${plateauRow.invalid}`;
      saturated.push(plateauRow.invalid);
    } else if (plateauRow.invalid) {
      // Drops with a healthy generator: it was given too few VUs. That says nothing about
      // the service, and nothing against the generator either.
      resource = 'inconclusive';
      summary = `inconclusive: ${plateauRow.step} dropped ${plateauRow.dropped} starts because every VU was busy${inputs.vusMax ? ` (vus_max ${inputs.vusMax})` : ''}, so the service was not given that load; rerun with more VUs (plateau run sizes them and reruns by itself)`;
      saturated.push(plateauRow.invalid);
    } else if (s && b) {
      const poolMax = settings?.poolMax ?? null;
      const queueMax = settings?.queueMax ?? null;
      const { pct, poolFull, cpuFull, queryRose, dbKnown, dbNow, dbBase } = judgeRow(
        s,
        b,
        settings,
        criteria,
      );
      const poolText = `pool ${fmt(pct, 0)}% checked out${poolMax ? ` of ${poolMax}` : ''}`;
      const waitText = `waiting mean ${fmt(s.waitingMean)}, max ${s.waitingMax}${queueMax !== null ? ` (queue cap ${queueMax})` : ''}`;
      const waitP95Text = `wait p95 ${fmt(s.waitP95Ms)} ms (${fmt(b.waitP95Ms)} ms at ${baseline!.step})`;
      const queryText = dbKnown
        ? `database p95 ${fmt(dbNow)} ms (${fmt(dbBase)} ms at ${baseline!.step})`
        : `query p95 ${fmt(s.queryP95Ms)} ms (${fmt(b.queryP95Ms)} ms at ${baseline!.step})`;
      const cpuText = `CPU ${fmt(s.cpuPct, 0)}%, event loop ${fmt(s.eventLoopUtilization * 100, 0)}% busy (${fmt(b.cpuPct, 0)}%, ${fmt(b.eventLoopUtilization * 100, 0)}% at ${baseline!.step})`;
      // Both full: the pool's connections may be held by a late event loop rather than by
      // the database. At the database's own time per query the pool could serve
      // poolMax ÷ that time; a plateau well below it means the connections waited for the
      // loop (to read results, to resume the next waiter), and the core is the first limit.
      const dbMs = dbKnown ? dbNow : null;
      const poolCapacity = poolFull && cpuFull && poolMax && dbMs ? (poolMax * 1000) / dbMs : null;
      const loopHeldPool = poolCapacity !== null && plateauServed < POOL_HELD_BY_LOOP * poolCapacity;
      if (poolFull && !loopHeldPool) {
        resource = 'pool';
        saturated.push(poolText, waitText, waitP95Text);
        if (cpuFull) {
          saturated.push(cpuText);
          if (poolCapacity === null) {
            notes.push(
              `the pool and the CPU were both saturated at ${plateauRow.step}, and without the database's own time per query it cannot be told whether the connections waited for the database or for the event loop: confirm with plateau confirm <run-dir> --set POOL_MAX=… (the pool if that moves the plateau)`,
            );
          }
        }
      } else if (cpuFull) {
        resource = 'cpu';
        saturated.push(cpuText);
        if (loopHeldPool) {
          saturated.push(
            `${poolText}, held by the late event loop: at the database's own ${fmt(dbMs!)} ms a query its ${poolMax} connections serve ${fmt(poolCapacity!)}/s`,
          );
        }
      } else if (queryRose) {
        resource = 'database';
        saturated.push(queryText, poolText);
      } else if ((evidenceRow.server?.sheds?.admission ?? 0) > 0) {
        // Nothing listed was full, and the service refused at its door: its admission gate,
        // not a resource, set the plateau (the gate's watermark is below saturation).
        resource = 'admission';
        const refused = beyond.reduce((a, r) => a + (r.server?.sheds?.admission ?? 0), 0);
        saturated.push(`the admission gate refused ${refused} requests at the door (503, reason admission)`);
      } else {
        resource = 'unlisted';
      }
      if (resource !== 'pool' && pct < criteria.poolSaturatedPct) flat.push(poolText);
      if (resource !== 'database') flat.push(queryText);
      if (resource !== 'cpu' && !cpuFull) flat.push(cpuText);
      summary =
        resource === 'unlisted'
          ? 'throughput flattened but no listed queue grew; the bottleneck is off the list (the generator, its link, or an unlisted pool)'
          : `${resource}, ${fmt(plateauServed)} served/s`;
      if (dbKnown && s.queryP95Ms >= criteria.queryRise * Math.max(b.queryP95Ms, 0.001) && !queryRose) {
        notes.push(
          `the query time the service saw rose (p95 ${fmt(s.queryP95Ms)} ms, ${fmt(b.queryP95Ms)} ms at ${baseline!.step}) while the database's own stayed flat: the rise is the service's event loop reading results late${s.loopDelayP95Ms != null ? ` (loop delay p95 ${fmt(s.loopDelayP95Ms)} ms)` : ''}, not the database`,
        );
      }
    } else {
      resource = 'unlisted';
      summary = `throughput flattened at ${fmt(plateauServed)}/s; without the server side the resource is unknown`;
    }
  }

  // Past the plateau served must hold; when it falls, the clients gave up on work the
  // service still did (a congestion collapse), and "held" would be false.
  const validBeyond = plateauRow ? beyond.filter((r) => !r.invalid) : [];
  const lowest = validBeyond.reduce<SaturationRow | undefined>(
    (low, r) => (!low || r.servedPerSec < low.servedPerSec ? r : low),
    undefined,
  );
  const collapsed = lowest !== undefined && lowest.servedPerSec < COLLAPSE_SHARE * plateauServed;
  const collapse = collapsed ? collapseWords(lowest, plateauServed, validBeyond) : '';

  // Little's Law, from the pool's own figures.
  let littlesLaw: Verdict['littlesLaw'] = null;
  const poolMax = settings?.poolMax ?? null;
  if (poolMax && hasServer && plateauRow?.server) {
    const kneeServer = knee?.server;
    const holdBelow =
      kneeServer?.checkedOutPct != null && knee!.servedPerSec > 0
        ? ((kneeServer.checkedOutPct / 100) * poolMax) / knee!.servedPerSec
        : null;
    const predictedCeiling = holdBelow ? poolMax / holdBelow : null;
    const holdAtPlateau = plateauServed > 0 ? poolMax / plateauServed : null;
    const queueMax = settings?.queueMax ?? null;
    const predictedWait =
      holdAtPlateau !== null && queueMax !== null ? ((queueMax * holdAtPlateau) / poolMax) * 1000 : null;
    const measuredWait = plateauRow.server.waitP95Ms;
    let disagreement: string | null = null;
    if (
      resource === 'pool' &&
      predictedCeiling !== null &&
      Math.abs(predictedCeiling - plateauServed) > 0.25 * plateauServed
    ) {
      disagreement = collapsed
        ? `predicted ceiling ${fmt(predictedCeiling)}/s vs measured plateau ${fmt(plateauServed)}/s: the pool kept working near its ceiling, but the callers gave up on much of that work (see overload)`
        : `predicted ceiling ${fmt(predictedCeiling)}/s vs measured plateau ${fmt(plateauServed)}/s: check the instrumentation or what runs between release and the next waiter`;
    } else if (
      resource === 'pool' &&
      predictedWait !== null &&
      queueMax &&
      Math.abs(predictedWait - measuredWait) > 0.5 * predictedWait + 20
    ) {
      disagreement = `predicted wait with the queue full ${fmt(predictedWait)} ms vs measured wait p95 ${fmt(measuredWait)} ms`;
    }
    littlesLaw = {
      holdMsBelowKnee: holdBelow === null ? null : Math.round(holdBelow * 100000) / 100,
      predictedCeilingPerSec: predictedCeiling === null ? null : Math.round(predictedCeiling * 10) / 10,
      holdMsAtPlateau: holdAtPlateau === null ? null : Math.round(holdAtPlateau * 100000) / 100,
      predictedQueueWaitMs: predictedWait === null ? null : Math.round(predictedWait * 10) / 10,
      measuredWaitP95Ms: measuredWait,
      disagreement,
    };
    if (disagreement) notes.push(`Little's Law disagrees: ${disagreement}`);
  }

  // Safe limit: the highest step, counting up from the first, that meets the objectives.
  let safe: SaturationRow | undefined;
  for (const row of rateRows) {
    const ok =
      !row.invalid &&
      row.dropped === 0 &&
      row.latencyMs.p95 < objectives.p95Ms &&
      row.failureRate < objectives.failRate;
    if (!ok) break;
    safe = row;
  }

  // Recovery, from the server's per-second timeline, judged against the recovery rate's own level.
  const recovery = recoveryFrom(inputs, rows, objectives.p95Ms, notes);

  // Overload behaviour past the plateau.
  let overload = 'not reached: no step went past the plateau';
  let backlog: Verdict['backlog'] = null;
  if (plateauRow) {
    const shed = beyond.reduce((sum, r) => sum + r.failures.shed, 0);
    const otherFailures = beyond.reduce((sum, r) => sum + totalFailuresOf(r) - r.failures.shed, 0);
    if (shed > 0) {
      const reasons = countsByReason(beyond, (r) => r.server?.sheds);
      overload = `503 + Retry-After${reasons ? ` (${reasons})` : ''}; ${collapsed ? collapse : `served rate held at ${fmt(plateauServed)}/s`}`;
    } else if (collapsed) {
      backlog = backlogOf(inputs, rows, plateauServed, recovery);
      overload = `no refusals; ${collapse}`;
    } else {
      backlog = backlogOf(inputs, rows, plateauServed, recovery);
      overload = describeBacklog(backlog, beyond, plateauServed, otherFailures, inputs.recoveryRatePerSec);
    }
    const expired = beyond.reduce((sum, r) => sum + (r.failures.expired ?? 0), 0);
    if (expired > 0) {
      const reasons = countsByReason(beyond, (r) => r.server?.expired);
      overload += `; ${expired} answered 504 because their deadline had passed${reasons ? ` (${reasons})` : ''}: no work was done for them`;
    }
  }
  if (backlog?.drainPredicted) {
    notes.push(
      'the backlog had not drained when the run ended: the drain time is a prediction, backlog ÷ (plateau − recovery rate)',
    );
  }
  const littlesLawChecks = littlesLawChecksOf(rows);
  for (const check of littlesLawChecks.filter((c) => c.steady && !c.agrees)) {
    notes.push(
      `Little's Law disagrees at ${check.step} (${check.where}): ${fmt(check.measured)} in flight measured, ${fmt(check.predicted)} predicted (served × mean latency): check the instrumentation`,
    );
  }

  const database = inputs.database
    ? {
        ordinarySlots: inputs.database.ordinarySlots,
        maxReplicas: poolMax ? Math.floor(inputs.database.ordinarySlots / poolMax) : null,
        summary: `replicas x pool max <= ${inputs.database.ordinarySlots} slots${poolMax ? ` (at most ${Math.floor(inputs.database.ordinarySlots / poolMax)} replicas of pool ${poolMax})` : ''}`,
      }
    : null;

  return {
    plateau,
    firstLimit: { resource, summary },
    evidence: { saturated, flat },
    littlesLaw,
    safeLimit: {
      ratePerSec: safe?.offeredPerSec ?? null,
      step: safe?.step ?? null,
      p95Ms: safe?.latencyMs.p95 ?? null,
      failureRate: safe?.failureRate ?? null,
      jittered: inputs.jittered === true,
      fromRun: null,
    },
    overload,
    backlog,
    recovery,
    database,
    littlesLawChecks,
    nextLimit: NEXT_LIMIT[resource],
    notes,
  };
}

const NEXT_LIMIT: Record<LimitResource, string> = {
  pool: 'PostgreSQL: its CPU, locks and wait events (pg_stat_activity) once the pool is larger; then the service CPU',
  cpu: 'the event loop and GC; then the pool once CPU is added (more replicas or less work per request)',
  database: 'PostgreSQL waits (pg_stat_activity wait_event), slow queries and the database host CPU',
  admission:
    "the CPU the gate protects: with its watermark higher the service serves more and waits longer; read the gate's transitions (admission_transitions_total) against the latency you can accept",
  generator: 'rerun with a stronger generator (execution segments on more cores or machines)',
  inconclusive:
    'rerun with more pre-allocated VUs (about rate × latency in flight), then read the first limit',
  unlisted:
    'instrument what is not listed: other pools (HTTP clients, thread pools), the network link, the generator host',
  none: 'raise the steps until served throughput stops following offered load',
};

/**
 * With both the pool and the CPU saturated, a plateau below this share of what the pool
 * could serve at the database's own time per query names the CPU: the connections were
 * held by the late event loop, not by the database.
 */
const POOL_HELD_BY_LOOP = 0.8;

/** Which listed resources saturated in a row's server figures, against the first step's. */
function judgeRow(
  s: NonNullable<SaturationRow['server']>,
  b: NonNullable<SaturationRow['server']>,
  settings: ServiceSettings | null,
  criteria: VerdictCriteria,
) {
  const queueMax = settings?.queueMax ?? null;
  const pct = s.checkedOutPct ?? 0;
  const waitJumped = s.waitP95Ms >= 5 * Math.max(b.waitP95Ms, 1);
  const queueFull = queueMax !== null ? s.waitingMax >= queueMax : s.waitingMean >= 1;
  const poolFull = pct >= criteria.poolSaturatedPct && (queueFull || waitJumped);
  // A Node service saturates its one event-loop thread even when other threads keep
  // total CPU under a core: either figure counts.
  const cpuFull = s.cpuPct >= criteria.cpuSaturatedPct || s.eventLoopUtilization >= criteria.loopSaturated;
  // The database's own time isolates it from the service's event loop; the query time
  // the service saw is the fallback for services that do not report it.
  const dbKnown = s.databaseP95Ms != null && b.databaseP95Ms != null;
  const dbNow = dbKnown ? s.databaseP95Ms! : s.queryP95Ms;
  const dbBase = dbKnown ? b.databaseP95Ms! : b.queryP95Ms;
  const queryRose = dbNow >= criteria.queryRise * Math.max(dbBase, 0.001) && pct < criteria.poolSaturatedPct;
  return { pct, poolFull, cpuFull, queryRose, dbKnown, dbNow, dbBase };
}

/** Served past the plateau below this share of it is a collapse, not a plateau that held. */
const COLLAPSE_SHARE = 0.8;

/** The overload words of a served rate that fell past the plateau. */
function collapseWords(lowest: SaturationRow, plateauServed: number, beyond: SaturationRow[]): string {
  const timeouts = beyond.reduce((a, r) => a + r.failures.timeouts, 0);
  const queries = lowest.server?.queriesPerSec ?? null;
  const busy =
    queries !== null && queries > 2 * lowest.servedPerSec
      ? `, while the service ran ${fmt(queries)} queries/s for callers who had gone (work for nobody)`
      : '';
  return `served did not hold: it fell from ${fmt(plateauServed)}/s to ${fmt(lowest.servedPerSec)}/s at ${lowest.step}${timeouts > 0 ? `; ${timeouts} requests timed out at the client's deadline` : ''}${busy}. A congestion collapse: the queue is deeper than the deadline allows (bound it to deadline ÷ time per request, or honour deadlines)`;
}

/** `reason n, reason n` summed over rows, largest first; '' when nothing was counted. */
function countsByReason(
  rows: SaturationRow[],
  pick: (row: SaturationRow) => Record<string, number> | undefined,
): string {
  const sums = new Map<string, number>();
  for (const row of rows)
    for (const [reason, n] of Object.entries(pick(row) ?? {})) sums.set(reason, (sums.get(reason) ?? 0) + n);
  return [...sums]
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
}

function totalFailuresOf(row: SaturationRow): number {
  return totalFailures(row.failures);
}

/** Whether a row's trouble is the generator's own (CPU or lag), not a shortage of VUs. */
function generatorCouldNotKeepUp(row: SaturationRow): boolean {
  const { lagMsMax, cpuPctMax } = row.generator;
  return (
    (lagMsMax !== null && lagMsMax > GENERATOR_LIMITS.lagMs) ||
    (cpuPctMax !== null && cpuPctMax >= GENERATOR_LIMITS.cpuPct)
  );
}

/** Timeline points after the ramp (drain, then recovery), oldest first. */
function afterRamp(timeline: TimelinePoint[]): TimelinePoint[] {
  const rampEnd = timeline.findIndex((p) => p.step === 'drain' || p.step === 'recovery');
  return rampEnd < 0 ? [] : timeline.slice(rampEnd);
}

/**
 * What became of the excess when the service queued it: how many waited when the ramp
 * ended, how long requests sent in the last step waited, how long the backlog took to
 * drain (measured, or predicted as backlog ÷ (plateau − recovery rate) when the run ended
 * first), and how many still waited when the load stopped.
 */
function backlogOf(
  inputs: VerdictInputs,
  rows: SaturationRow[],
  plateauServed: number,
  recovery: Verdict['recovery'],
): NonNullable<Verdict['backlog']> {
  const rateRows = rows.filter((r) => r.offeredPerSec !== null);
  const last = rateRows.at(-1);
  const timeline = inputs.timeline;
  const after = afterRamp(timeline);
  let queuedAtRampEnd: number | null = null;
  let queuedAtEnd: number | null = null;
  if (after.length > 0) {
    const rampEndIndex = timeline.indexOf(after[0]!);
    const lastRampSecond = timeline[rampEndIndex - 1];
    queuedAtRampEnd = lastRampSecond ? Math.round(lastRampSecond.waitingMean) : null;
    const inLoad = after.filter((p) => p.step === 'drain' || p.step === 'recovery');
    queuedAtEnd = inLoad.length > 0 ? Math.round(inLoad.at(-1)!.waitingMean) : null;
  } else if (inputs.clientInFlightAt && inputs.clientRampEndS != null) {
    // Client side only: in flight beyond what the service holds at its plateau rate.
    const base = (last?.latencyByWindowMs?.med ?? 0) / 1000;
    const excess = (atS: number) =>
      Math.max(0, Math.round(inputs.clientInFlightAt!(atS) - plateauServed * Math.min(base, 1)));
    queuedAtRampEnd = excess(inputs.clientRampEndS);
    if (inputs.clientLoadEndS != null) queuedAtEnd = excess(inputs.clientLoadEndS);
  }
  let drainSeconds = recovery.seconds;
  let drainPredicted = false;
  const recoveryRate = inputs.recoveryRatePerSec;
  if (drainSeconds === null && queuedAtRampEnd !== null && recoveryRate !== null) {
    drainPredicted = true;
    drainSeconds =
      plateauServed > recoveryRate
        ? Math.round((queuedAtRampEnd / (plateauServed - recoveryRate)) * 10) / 10
        : null;
  }
  return {
    queuedAtRampEnd,
    waitP95Ms: last ? last.latencyMs.p95 : null,
    drainSeconds,
    drainPredicted,
    queuedAtEnd,
  };
}

/** The overload line of a service that queued its excess instead of refusing it. */
function describeBacklog(
  backlog: NonNullable<Verdict['backlog']>,
  beyond: SaturationRow[],
  plateauServed: number,
  otherFailures: number,
  recoveryRate: number | null,
): string {
  const last = beyond.at(-1)!;
  const parts: string[] = [];
  parts.push(
    otherFailures === 0
      ? `zero errors because nothing was allowed to fail: past ${fmt(plateauServed)} served/s the excess queued`
      : `${otherFailures} failures (timeouts ${beyond.reduce((a, r) => a + r.failures.timeouts, 0)}) and no refusals: past ${fmt(plateauServed)} served/s the excess queued`,
  );
  if (backlog.queuedAtRampEnd !== null) parts.push(`${backlog.queuedAtRampEnd} waiting when the ramp ended`);
  if (backlog.waitP95Ms !== null)
    parts.push(`requests sent at ${last.step} took p95 ${fmt(backlog.waitP95Ms / 1000, 2)} s`);
  if (backlog.drainSeconds !== null) {
    parts.push(
      backlog.drainPredicted
        ? `predicted to drain in ~${fmt(backlog.drainSeconds)} s${recoveryRate !== null ? ` at ${recoveryRate}/s` : ''} (the run ended first)`
        : `drained in ${fmt(backlog.drainSeconds)} s${recoveryRate !== null ? ` at ${recoveryRate}/s` : ''}`,
    );
  } else if (backlog.drainPredicted || backlog.queuedAtRampEnd !== null) {
    parts.push('never drains at the recovery rate (it is not below the plateau)');
  }
  if (backlog.queuedAtEnd !== null) parts.push(`${backlog.queuedAtEnd} still waiting when the load stopped`);
  return parts.join('; ');
}

/**
 * Little's Law per step, L = λ × W: on the pool (mean checked out against served × mean
 * query time) and on the client (mean in flight against completed × mean latency, both
 * over the step's window). It holds in steady state only; a step whose backlog grew by
 * more than a quarter during its window is marked unsteady and not judged.
 */
function littlesLawChecksOf(rows: SaturationRow[]): NonNullable<Verdict['littlesLawChecks']> {
  const checks: NonNullable<Verdict['littlesLawChecks']> = [];
  let previousAtEnd: number | null = null;
  for (const row of rows) {
    const inFlight = row.inFlight;
    if (
      row.offeredPerSec !== null &&
      row.server?.checkedOutMean !== undefined &&
      row.server.checkedOutPredicted != null
    ) {
      const measured = row.server.checkedOutMean;
      const predicted = row.server.checkedOutPredicted;
      checks.push({
        step: row.step,
        where: 'pool',
        measured,
        predicted,
        steady: true,
        agrees: agrees(measured, predicted),
      });
    }
    if (row.offeredPerSec !== null && inFlight && inFlight.predicted !== null) {
      const start = previousAtEnd ?? 0;
      const steady = Math.abs(inFlight.atEnd - start) <= 0.25 * Math.max(inFlight.mean, 4);
      checks.push({
        step: row.step,
        where: 'client',
        measured: inFlight.mean,
        predicted: inFlight.predicted,
        steady,
        agrees: agrees(inFlight.mean, inFlight.predicted),
      });
    }
    previousAtEnd = inFlight?.atEnd ?? null;
  }
  return checks;
}

/** Within 25 %, or within half a request when both are small. */
function agrees(measured: number, predicted: number): boolean {
  return Math.abs(measured - predicted) <= Math.max(0.5, 0.25 * Math.max(measured, predicted));
}

/** Seconds of the recovery phase that teach its own steady state: its last 40 %, at least 3. */
const SETTLED_SHARE = 0.4;
const SETTLED_MIN_SECONDS = 3;

/**
 * Seconds from the end of the ramp (the first second labelled drain or recovery) until the
 * wait queue is back within the band the recovery rate settles to, and (when the client
 * side is known) client p95 in that second is under the objective.
 *
 * The band is learnt from the run: the highest time-weighted waiting mean over the seconds
 * where the queue had settled at the end (settledTail), never under EMPTY_QUEUE_MEAN. At a
 * busy recovery rate requests wait for a moment now and then, so an absolute "empty" would
 * call a drained queue undrained. When those seconds are too few, or the queue still grew
 * through them, the band cannot be learnt and the record says so.
 */
function recoveryFrom(
  inputs: VerdictInputs,
  rows: SaturationRow[],
  objectiveMs: number,
  notes: string[],
): Verdict['recovery'] {
  const timeline = inputs.timeline;
  const clientP95 = inputs.clientP95MsBySecond;
  const after = afterRamp(timeline);
  if (after.length === 0) {
    const recoveryRow = rows.find((r) => r.step === 'recovery');
    return {
      seconds: null,
      summary: recoveryRow
        ? `no server timeline; client p95 in recovery ${fmt(recoveryRow.latencyMs.p95)} ms`
        : 'not measured (no server timeline and no recovery step)',
    };
  }
  const start = after[0]!.t;
  const gaps = after.some((p, i) => i > 0 && p.t - after[i - 1]!.t > 1);
  if (gaps)
    notes.push(
      'the server timeline has gaps after the ramp (the service restarted or stalled): recovery is approximate',
    );
  let band = EMPTY_QUEUE_MEAN;
  let bandKnown = false;
  if (after.length >= 2 * SETTLED_MIN_SECONDS) {
    const settled = settledTail(after.map((p) => p.waitingMean));
    if (settled.kind !== 'settled') {
      const trend = `waiting mean ${fmt(settled.from)} → ${fmt(settled.to)} over the last ${settled.seconds} s`;
      return {
        seconds: null,
        summary:
          settled.kind === 'growing'
            ? `not recovered: the wait queue still grew at the recovery rate (${trend})`
            : `not recovered within the run: the wait queue was still draining when it ended (${trend})`,
      };
    }
    band = Math.max(EMPTY_QUEUE_MEAN, ...settled.values);
    bandKnown = true;
  } else {
    notes.push(
      `the phase after the ramp is too short (${after.length} s) to learn the recovery rate's own queue level: recovery is judged against an empty queue (mean under ${EMPTY_QUEUE_MEAN})`,
    );
  }
  const offset = Math.round(inputs.clockOffsetS ?? 0);
  const clientKnown = clientP95 !== undefined && clientP95.size > 0;
  const clear = after.find(
    (p) => p.waitingMean <= band && (!clientKnown || (clientP95.get(p.t - offset) ?? 0) < objectiveMs),
  );
  if (!clear) {
    return {
      seconds: null,
      summary: clientKnown
        ? 'the wait queue or client p95 never recovered within the run'
        : 'the wait queue never emptied within the run',
    };
  }
  const seconds = clear.t - start;
  const bandText = bandKnown
    ? `back to the recovery rate's own level (waiting ≤ ${fmt(band, 2)})`
    : 'queue empty';
  return {
    seconds,
    summary: `${bandText}${clientKnown ? ` and p95 under ${objectiveMs} ms` : ''} within ${seconds} s of the end of the ramp`,
  };
}

type Settled =
  | { kind: 'settled'; values: number[] }
  | { kind: 'growing' | 'draining'; from: number; to: number; seconds: number };

/**
 * The seconds at the end of a run where the waiting count has settled: the last 40 % of
 * them, halved while their first half still waits clearly more than their second (more
 * than half a request and a fifth of the level: the backlog was still draining), down to
 * 3 s. A tail that rises is `growing`; one still falling at 3 s is `draining`.
 */
function settledTail(waiting: number[]): Settled {
  let k = Math.max(SETTLED_MIN_SECONDS, Math.ceil(waiting.length * SETTLED_SHARE));
  for (;;) {
    const tail = waiting.slice(-k);
    const half = Math.floor(tail.length / 2);
    const early = mean(tail.slice(0, half));
    const late = mean(tail.slice(half));
    // Flat: the halves differ by at most half a request or a fifth of the level.
    const tolerance = Math.max(0.5, 0.2 * Math.max(early, late));
    if (late - early > tolerance && late > 1) return { kind: 'growing', from: early, to: late, seconds: k };
    if (early - late <= tolerance) return { kind: 'settled', values: tail };
    if (k <= SETTLED_MIN_SECONDS) return { kind: 'draining', from: early, to: late, seconds: k };
    k = Math.max(SETTLED_MIN_SECONDS, Math.ceil(k / 2));
  }
}

function mean(values: number[]): number {
  return values.length > 0 ? values.reduce((a, b) => a + b, 0) / values.length : 0;
}
