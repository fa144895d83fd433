// The first limit from plateau's own GET /steps figures: pool, CPU (event loop), database, admission.
import type {
  LimitResource,
  PredictedCeiling,
  SaturationRow,
  ServiceSettings,
  VerdictCriteria,
} from '../../contract/index.ts';
import { fmt } from './format.ts';
import type { PlateauFound } from './plateau.ts';

/** A first limit and its evidence: the columns that saturated at the plateau, and those that stayed flat. */
export interface LimitFinding {
  resource: LimitResource;
  summary: string;
  /** The resource's own name, when a published meter named it. */
  name?: string;
  saturated: string[];
  flat: string[];
}

/**
 * The first limit from plateau's own per-step figures (`row.server`, from `GET /steps`):
 * the pool when it was full (unless the late event loop held its connections), else the
 * CPU (or the one event-loop thread), else the database when its time per query rose,
 * else the admission gate when it refused at the door, else `unlisted`. Null when the
 * plateau's row has no server figures.
 */
export function stepsLimit(
  found: PlateauFound,
  settings: ServiceSettings | null,
  criteria: VerdictCriteria,
  notes: string[],
): LimitFinding | null {
  const { row: plateauRow, beyond, baseline, servedPerSec: plateauServed } = found;
  const b = baseline.server;
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
  if (!s || !b) return null;
  let resource: LimitResource;
  const saturated: string[] = [];
  const flat: string[] = [];
  const poolMax = settings?.poolMax ?? null;
  const queueMax = settings?.queueMax ?? null;
  const { pct, poolFull, cpuFull, queryRose, dbKnown, dbNow, dbBase } = judgeRow(s, b, settings, criteria);
  const poolText = `pool ${fmt(pct, 0)}% checked out${poolMax ? ` of ${poolMax}` : ''}`;
  const waitText = `waiting mean ${fmt(s.waitingMean)}, max ${s.waitingMax}${queueMax !== null ? ` (queue cap ${queueMax})` : ''}`;
  const waitP95Text = `wait p95 ${fmt(s.waitP95Ms)} ms (${fmt(b.waitP95Ms)} ms at ${baseline.step})`;
  const queryText = dbKnown
    ? `database p95 ${fmt(dbNow)} ms (${fmt(dbBase)} ms at ${baseline.step})`
    : `query p95 ${fmt(s.queryP95Ms)} ms (${fmt(b.queryP95Ms)} ms at ${baseline.step})`;
  const cpuText = `CPU ${fmt(s.cpuPct, 0)}%, event loop ${fmt(s.eventLoopUtilization * 100, 0)}% busy (${fmt(b.cpuPct, 0)}%, ${fmt(b.eventLoopUtilization * 100, 0)}% at ${baseline.step})`;
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
  const summary =
    resource === 'unlisted'
      ? 'throughput flattened but no listed queue grew; the bottleneck is off the list (the generator, its link, or an unlisted pool)'
      : `${resource}, ${fmt(plateauServed)} served/s`;
  if (dbKnown && s.queryP95Ms >= criteria.queryRise * Math.max(b.queryP95Ms, 0.001) && !queryRose) {
    notes.push(
      `the query time the service saw rose (p95 ${fmt(s.queryP95Ms)} ms, ${fmt(b.queryP95Ms)} ms at ${baseline.step}) while the database's own stayed flat: the rise is the service's event loop reading results late${s.loopDelayP95Ms != null ? ` (loop delay p95 ${fmt(s.loopDelayP95Ms)} ms)` : ''}, not the database`,
    );
  }
  return { resource, summary, saturated, flat };
}

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

/**
 * The ceilings of plateau's own pool and event loop, predicted by Little's Law from the steps
 * below the plateau (`rows`): the pool serves poolMax ÷ (mean checked out ÷ served) a second,
 * the one event-loop thread 1 core ÷ (CPU-seconds per request); each hold averaged over the
 * steps weighted by the requests they served. Empty without GET /steps figures.
 */
export function stepsCeilings(rows: SaturationRow[], settings: ServiceSettings | null): PredictedCeiling[] {
  const poolMax = settings?.poolMax ?? null;
  let served = 0;
  let poolHeld = 0;
  let cpuHeld = 0;
  for (const row of rows) {
    const s = row.server;
    if (!s || row.servedPerSec <= 0) continue;
    const checkedOut =
      s.checkedOutMean ?? (s.checkedOutPct !== null && poolMax ? (s.checkedOutPct / 100) * poolMax : 0);
    // Σ (held per second) × seconds ÷ Σ served: the mean hold per request over the steps.
    poolHeld += checkedOut * row.seconds;
    cpuHeld += (s.cpuPct / 100) * row.seconds;
    served += row.servedPerSec * row.seconds;
  }
  if (served <= 0) return [];
  const ceilings: PredictedCeiling[] = [];
  if (poolMax && poolHeld > 0) {
    const hold = poolHeld / served;
    ceilings.push({
      name: 'pool',
      role: 'pool',
      capacity: poolMax,
      holdSecondsPerRequest: round6(hold),
      ceilingPerSec: round1(poolMax / hold),
    });
  }
  if (cpuHeld > 0) {
    const hold = cpuHeld / served;
    ceilings.push({
      name: 'cpu',
      role: 'cpu',
      capacity: 1,
      holdSecondsPerRequest: round6(hold),
      ceilingPerSec: round1(1 / hold),
    });
  }
  return ceilings;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
