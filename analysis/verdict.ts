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
    const s = plateauRow.server;
    const b = baseline?.server;
    if (plateauRow.invalid) {
      resource = 'generator';
      summary = `the load generator, not the service: ${plateauRow.invalid}`;
      saturated.push(plateauRow.invalid);
    } else if (s && b) {
      const poolMax = settings?.poolMax ?? null;
      const queueMax = settings?.queueMax ?? null;
      const pct = s.checkedOutPct ?? 0;
      const waitJumped = s.waitP95Ms >= 5 * Math.max(b.waitP95Ms, 1);
      const queueFull = queueMax !== null ? s.waitingMax >= queueMax : s.waitingMean >= 1;
      const poolFull = pct >= criteria.poolSaturatedPct && (queueFull || waitJumped);
      // A Node service saturates its one event-loop thread even when other threads keep
      // total CPU under a core: either figure counts.
      const cpuFull =
        s.cpuPct >= criteria.cpuSaturatedPct || s.eventLoopUtilization >= criteria.loopSaturated;
      const queryRose =
        s.queryP95Ms >= criteria.queryRise * Math.max(b.queryP95Ms, 0.001) && pct < criteria.poolSaturatedPct;
      const poolText = `pool ${fmt(pct, 0)}% checked out${poolMax ? ` of ${poolMax}` : ''}`;
      const waitText = `waiting mean ${fmt(s.waitingMean)}, max ${s.waitingMax}${queueMax !== null ? ` (queue cap ${queueMax})` : ''}`;
      const waitP95Text = `wait p95 ${fmt(s.waitP95Ms)} ms (${fmt(b.waitP95Ms)} ms at ${baseline!.step})`;
      const queryText = `query p95 ${fmt(s.queryP95Ms)} ms (${fmt(b.queryP95Ms)} ms at ${baseline!.step})`;
      const cpuText = `CPU ${fmt(s.cpuPct, 0)}%, event loop ${fmt(s.eventLoopUtilization * 100, 0)}% busy (${fmt(b.cpuPct, 0)}%, ${fmt(b.eventLoopUtilization * 100, 0)}% at ${baseline!.step})`;
      if (poolFull) {
        resource = 'pool';
        saturated.push(poolText, waitText, waitP95Text);
      } else if (cpuFull) {
        resource = 'cpu';
        saturated.push(cpuText);
      } else if (queryRose) {
        resource = 'database';
        saturated.push(queryText, poolText);
      } else {
        resource = 'unlisted';
      }
      if (resource !== 'pool' && pct < criteria.poolSaturatedPct) flat.push(poolText);
      if (resource !== 'database') flat.push(queryText);
      if (resource !== 'cpu') flat.push(cpuText);
      summary =
        resource === 'unlisted'
          ? 'throughput flattened but no listed queue grew; the bottleneck is off the list (the generator, its link, or an unlisted pool)'
          : `${resource}, ${fmt(plateauServed)} served/s`;
    } else {
      resource = 'unlisted';
      summary = `throughput flattened at ${fmt(plateauServed)}/s; without the server side the resource is unknown`;
    }
  }

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
      disagreement = `predicted ceiling ${fmt(predictedCeiling)}/s vs measured plateau ${fmt(plateauServed)}/s: check the instrumentation or what runs between release and the next waiter`;
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

  // Overload behaviour past the plateau.
  let overload = 'not reached: no step went past the plateau';
  if (plateauRow) {
    const shed = beyond.reduce((sum, r) => sum + r.failures.shed, 0);
    const worstP95 = Math.max(...beyond.map((r) => r.latencyMs.p95));
    if (shed > 0) {
      overload = `503 + Retry-After; served rate held at ${fmt(plateauServed)}/s`;
    } else {
      const last = beyond.at(-1)!;
      const backlog = last.server?.waitingMax ?? null;
      const recoveryRate = inputs.recoveryRatePerSec;
      let drain = '';
      if (backlog !== null && recoveryRate !== null && plateauServed > recoveryRate) {
        drain = `, drains in ~${fmt(backlog / (plateauServed - recoveryRate))} s at ${recoveryRate}/s`;
      }
      overload = `no errors; p95 ${fmt(worstP95 / 1000, 2)} s: queueing${backlog !== null ? `; backlog ${backlog} at the end of the ramp${drain}` : ''}`;
    }
  }

  // Recovery, from the server's per-second timeline.
  const recovery = recoveryFrom(inputs.timeline, rows, inputs.clientP95MsBySecond, objectives.p95Ms);

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
    recovery,
    database,
    nextLimit: NEXT_LIMIT[resource],
    notes,
  };
}

const NEXT_LIMIT: Record<LimitResource, string> = {
  pool: 'PostgreSQL: its CPU, locks and wait events (pg_stat_activity) once the pool is larger; then the service CPU',
  cpu: 'the event loop and GC; then the pool once CPU is added (more replicas or less work per request)',
  database: 'PostgreSQL waits (pg_stat_activity wait_event), slow queries and the database host CPU',
  generator: 'rerun with a stronger generator (more VUs, execution segments on more cores or machines)',
  unlisted:
    'instrument what is not listed: other pools (HTTP clients, thread pools), the network link, the generator host',
  none: 'raise the steps until served throughput stops following offered load',
};

/**
 * Seconds from the end of the ramp (the first second labelled drain or recovery) until the
 * wait queue is empty (mean under 0.1 over a second) and, when the client side is known,
 * client p95 in that second is back under the objective.
 */
function recoveryFrom(
  timeline: TimelinePoint[],
  rows: SaturationRow[],
  clientP95: Map<number, number> | undefined,
  objectiveMs: number,
): Verdict['recovery'] {
  const rampEnd = timeline.findIndex((p) => p.step === 'drain' || p.step === 'recovery');
  if (timeline.length === 0 || rampEnd < 0) {
    const recoveryRow = rows.find((r) => r.step === 'recovery');
    return {
      seconds: null,
      summary: recoveryRow
        ? `no server timeline; client p95 in recovery ${fmt(recoveryRow.latencyMs.p95)} ms`
        : 'not measured (no server timeline and no recovery step)',
    };
  }
  const start = timeline[rampEnd]!.t;
  const clientKnown = clientP95 !== undefined && clientP95.size > 0;
  // Empty: under a tenth of a request waiting on average over the second (at a busy
  // recovery rate a request may still wait for a moment now and then).
  const clear = timeline
    .slice(rampEnd)
    .find(
      (p) => p.waitingMean < EMPTY_QUEUE_MEAN && (!clientKnown || (clientP95.get(p.t) ?? 0) < objectiveMs),
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
  return {
    seconds,
    summary: `queue empty${clientKnown ? ` and p95 under ${objectiveMs} ms` : ''} within ${seconds} s of the end of the ramp`,
  };
}
