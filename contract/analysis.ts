// analysis.json: the saturation table, the verdict and its evidence. A stable contract:
// CI scripts read verdict.plateau.servedPerSec, verdict.firstLimit.resource,
// verdict.safeLimit.ratePerSec and verdict.recovery.seconds.
import type { KneeResult } from './curve-fit.ts';
import type { ResourceRole, ResourceStepFigures } from './resources.ts';
import type { RunEnding } from './run-manifest.ts';
import type { SweepRow, SweepVerdict } from './sweep.ts';

/** Requests that did not succeed, by class. */
export interface FailureCounts {
  /** 503 (load shedding). */
  shed: number;
  /** 429. */
  rateLimited: number;
  /** Other 5xx: defects. */
  serverErrors: number;
  /**
   * 504: the service gave up on the request because its caller's deadline had passed (an
   * expiry, not a defect; absent in analyses written before expiries were counted).
   */
  expired?: number;
  /** 4xx other than 429. */
  clientErrors: number;
  /** k6 error code 1050. */
  timeouts: number;
  /** Other transport failures (status 0). */
  networkErrors: number;
}

/** Client latency of a set of requests, ms. */
export interface ClientLatency {
  med: number;
  p95: number;
  p99: number;
  max: number;
  /** Arithmetic mean (absent in analyses before schema 2). */
  mean?: number;
}

/** One step of the saturation table. Null means "not measured". */
export interface SaturationRow {
  step: string;
  /** Target arrival rate of the step (null for drain, recovery, or untagged windows). */
  offeredPerSec: number | null;
  /** Requests the client started per second (counted by their step tag: when they were sent). */
  sentPerSec: number;
  /**
   * Served per second: successful responses *completed during the step's window* (whichever
   * step they were sent in): the server's successes (2xx) while the step was current, else the client's
   * 2xx stamped in the window. Under a queue that never refuses this is the only honest rate.
   */
  servedPerSec: number;
  /** Where servedPerSec came from. */
  servedSource: 'server' | 'client';
  /**
   * `window`: completions in the step's window; `tag`: successes among the requests sent in
   * the step, whenever they completed (analyses before schema 2, or no window could be found).
   */
  servedBasis?: 'window' | 'tag';
  /** Successes among the requests sent in this step per second, whenever they completed. */
  completedByTagPerSec?: number;
  /**
   * The client's own 2xx per second completed in the step's window: what callers received
   * before their deadline (their timeout), whatever the service says it served.
   */
  goodputPerSec?: number | null;
  /** Requests of this step that were retries of an earlier attempt (`attempt` tag above 1). */
  retries?: number;
  /** Seconds the rates are computed over. */
  seconds: number;
  requests: number;
  /** Latency of the requests sent in this step (by step tag). */
  latencyMs: ClientLatency;
  /** Latency of this step's successes (2xx) alone; null without any (absent in older analyses). */
  latencyOkMs?: ClientLatency | null;
  /** Latency of the responses that completed during this step's window; null without a window. */
  latencyByWindowMs?: ClientLatency | null;
  /**
   * Requests in flight on the client (sent, not yet answered) over the window: mean and at
   * its end, with Little's Law's prediction served × mean latency beside it.
   */
  inFlight?: { mean: number; atEnd: number; predicted: number | null } | null;
  /** The step's window on the client's clock, epoch s (null without one). */
  window?: { startS: number; endS: number } | null;
  failures: FailureCounts;
  /** (all failures) ÷ requests. */
  failureRate: number;
  dropped: number;
  /** Generator health when the engine recorded it. */
  generator: { lagMsMax: number | null; cpuPctMax: number | null };
  /** Server-side columns (null without GET /steps). */
  server: {
    checkedOutPct: number | null;
    waitingMean: number;
    waitingMax: number;
    waitP95Ms: number;
    queryP95Ms: number;
    /** Mean query time as the service saw it (absent before schema 2). */
    queryMeanMs?: number | null;
    /** The database's own time per query, p95 (null when the service does not report it). */
    databaseP95Ms?: number | null;
    /** Event-loop delay p95 while the step was current (null when not measured). */
    loopDelayP95Ms?: number | null;
    /** Mean connections checked out, with Little's Law's prediction served × mean query time. */
    checkedOutMean?: number;
    checkedOutPredicted?: number | null;
    cpuPct: number;
    /** Event-loop utilisation 0..1. */
    eventLoopUtilization: number;
    /** Refusals (503) the service made for this step's requests, by reason. */
    sheds?: Record<string, number>;
    /** 504s for callers whose deadline had passed, by reason. */
    expired?: Record<string, number>;
    /** Requests that found every limit full (pool at max, queue at its cap). */
    saturated?: number;
    /** 503s the service gave this step's requests because something they needed was unavailable, by reason (`database`). */
    unavailable?: Record<string, number>;
    /**
     * Time the database was unreachable while the step was current, ms (absent when the
     * service does not watch its database). Above 0 the row is not evidence (`invalid`).
     */
    databaseDownMs?: number;
    /**
     * Queries the service completed per second in the step's window, whether or not their
     * caller still waited: the work done (null when the service does not report it).
     */
    queriesPerSec?: number | null;
  } | null;
  /**
   * Resources recognised in the service's published meters (`--metrics`, `--prometheus`,
   * PostgreSQL's views), over the step's window; absent when no meter source was read.
   */
  resources?: ResourceStepFigures[];
  /** The row is not valid evidence (the generator failed to deliver the load, the run ended during it). */
  invalid: string | null;
  /**
   * The run ended during this step: it holds fewer than 90 % of the requests its plan sent
   * (`plannedRequests`, from run.json's rates, hold and ramp). Such a row is never judged
   * (it neither follows nor plateaus); absent on every other row.
   */
  cutShort?: { plannedRequests: number };
}

/**
 * `admission`: the service's own admission gate refused the excess before any listed resource
 * saturated (its watermark set the plateau);
 * `generator`: the load generator could not keep up (its CPU or event-loop lag);
 * `inconclusive`: the rows that matter dropped starts for want of VUs, so the service was
 * not given the load the step names.
 */
export const LIMIT_RESOURCES = [
  'pool',
  'threads',
  'queue',
  'cpu',
  'database',
  'admission',
  'generator',
  'inconclusive',
  'unlisted',
  'none',
] as const;
export type LimitResource = (typeof LIMIT_RESOURCES)[number];

/**
 * The thresholds the verdict judges by. The defaults suit the reference service; a service
 * whose pool or CPU is meant to run hotter, or whose queries are slower to start with, can be
 * judged by others (`plateau analyze --pool-saturated 95 …`).
 */
export interface VerdictCriteria {
  /** Served counts as following offered load down to this share of what the client sent (0..1). */
  followingShare: number;
  /** A pool is saturated from this % checked out. */
  poolSaturatedPct: number;
  /** A process is CPU-bound from this % of one core. */
  cpuSaturatedPct: number;
  /** An event loop is saturated from this utilisation (0..1). */
  loopSaturated: number;
  /**
   * Query time has risen when its p95 reaches this multiple of the first step's (the
   * database's own time when the service reports it, else the query time it saw).
   */
  queryRise: number;
}

/**
 * A resource's ceiling predicted from the first rate step, by Little's Law: what it holds
 * per request there (mean in use ÷ served) and so what its capacity can serve
 * (capacity ÷ hold time).
 */
export interface PredictedCeiling {
  name: string;
  role: ResourceRole;
  capacity: number;
  /** Mean held per request at the first step: s of a slot, or CPU-seconds for cpu. */
  holdSecondsPerRequest: number;
  ceilingPerSec: number;
}

/** A step and its repeat later in the same run (`r070` and `r070b`), side by side. */
export interface RepeatPair {
  step: string;
  repeat: string;
  offeredPerSec: number;
  /** Served by window, the first run then the repeat, /s. */
  servedPerSec: [number, number];
  /** Client p95, the first run then the repeat, ms. */
  p95Ms: [number, number];
  failureRate: [number, number];
  /** |served of the repeat − served of the first run| ÷ served of the first run. */
  movedShare: number;
  /** Why the repeat is not evidence (dropped starts, the generator, cut short); absent when it is. */
  invalid?: string;
}

/**
 * Whether the plateau and the safe limit held when their steps ran again (`stable` null:
 * that step was not repeated, or its repeat is not evidence). Absent from a run without
 * repeats, and from analyses written before repeats existed.
 */
export interface RepeatsVerdict {
  pairs: RepeatPair[];
  /**
   * The run's own noise, as a share: the farthest served strayed from sent at the valid
   * steps below the plateau (where nothing limited it), or the spread of served across the
   * steps from the plateau's on (each a measure of the plateau), the larger, at least 2 %. A
   * figure that moved between a step and its repeat by more than this is unstable.
   */
  noiseShare: number;
  plateau: { stable: boolean | null; words: string };
  safeLimit: { stable: boolean | null; words: string };
  /** The record's `repeats:` line. */
  summary: string;
}

/** The verdict on a run. */
export interface Verdict {
  /**
   * `unstable`: the plateau moved between its step and that step's repeat by more than the
   * run's noise (verdict.repeats); the figure is kept for comparison, the record does not
   * write it down.
   */
  plateau: { step: string; servedPerSec: number; offeredPerSec: number; unstable?: string } | null;
  /**
   * `name`: the resource's own name when a published meter named it (`hikaricp pool orders`,
   * `executor http`); absent for plateau's own `GET /steps` figures and the generator.
   */
  firstLimit: { resource: LimitResource; summary: string; name?: string };
  /**
   * Ceilings predicted from the first step, lowest first, and whether the run bore them out
   * (absent without resource figures at the first step).
   */
  prediction?: { ceilings: PredictedCeiling[]; finding: string } | null;
  /**
   * What to scale on (the first limit's waiting or wait time), and what a CPU-targeted
   * autoscaler would do at the plateau when CPU is not the limit.
   */
  scaling?: { signal: string; cpuAutoscaler: string | null } | null;
  /**
   * The knee of served against offered fitted to every valid rate step (analysis/fit/knee.ts),
   * beside the plateau the rule measured; null without rate steps (absent in analyses written
   * before it).
   */
  knee?: KneeResult | null;
  /** Saturated columns at the plateau, and the columns that stayed flat. */
  evidence: { saturated: string[]; flat: string[] };
  littlesLaw: {
    holdMsBelowKnee: number | null;
    predictedCeilingPerSec: number | null;
    holdMsAtPlateau: number | null;
    predictedQueueWaitMs: number | null;
    measuredWaitP95Ms: number | null;
    /** Prediction and measurement disagree by more than 25 %: check the instrumentation. */
    disagreement: string | null;
  } | null;
  /**
   * The safe limit quoted: this run's, or (real arrivals cluster) that of a jittered run of
   * the same configuration when one exists beside it (`fromRun` names it).
   */
  safeLimit: {
    ratePerSec: number | null;
    step: string | null;
    p95Ms: number | null;
    failureRate: number | null;
    jittered: boolean;
    fromRun: string | null;
    /**
     * The run ended before a step above this one could be judged: the limit is at least
     * this rate, and how far above it is not known (absent when the run completed).
     */
    atLeast?: boolean;
    /**
     * Why no figure is given although a step met the objectives: its repeat did not
     * (verdict.repeats); ratePerSec and step are then null. Absent otherwise.
     */
    unstable?: string;
  };
  /** The decisive steps run again and what they showed (absent without repeats). */
  repeats?: RepeatsVerdict | null;
  overload: string;
  /** What happened to the load past the plateau when it was queued rather than refused. */
  backlog?: {
    /** Requests waiting (server) or in flight beyond what the service holds (client) when the ramp ended. */
    queuedAtRampEnd: number | null;
    /** p95 latency of the requests sent in the last step of the ramp, ms. */
    waitP95Ms: number | null;
    /** Seconds from the end of the ramp until the queue was back in the recovery band. */
    drainSeconds: number | null;
    /** True when drainSeconds is predicted (backlog ÷ (plateau − recovery rate)), not measured. */
    drainPredicted: boolean;
    /** Still waiting when the load stopped. */
    queuedAtEnd: number | null;
  } | null;
  recovery: { seconds: number | null; summary: string };
  /**
   * Little's Law per step (L = λ × W) on the pool and on the client. `steady` false: the
   * backlog changed during the window, where the law does not hold and is not judged.
   */
  littlesLawChecks?: {
    step: string;
    where: 'pool' | 'client';
    measured: number;
    predicted: number;
    steady: boolean;
    agrees: boolean;
  }[];
  database: { ordinarySlots: number; maxReplicas: number | null; summary: string } | null;
  nextLimit: string;
  /** What could not be known (no server side, no manifest, …). */
  notes: string[];
}

/** The `analysis.json` of a run directory. */
export interface AnalysisResult {
  kind: 'plateau.analysis';
  /**
   * `closed` for a closed-model sweep (levels of clients, `sweep` holds its rows and
   * verdict; `verdict.plateau` and the safe limit are null); absent or `open` for rate steps.
   */
  model?: 'open' | 'closed';
  sweep?: { rows: SweepRow[]; verdict: SweepVerdict };
  /** 2: served by window, latency both ways, in flight, backlog; 1 is still read. */
  schemaVersion: 1 | 2;
  runId: string | null;
  /** Files the analysis read. */
  sources: { client: string | null; server: string | null; manifest: string | null };
  objectives: { p95Ms: number; failRate: number };
  /** The thresholds the verdict used (absent in analyses written before they were options). */
  criteria?: VerdictCriteria;
  table: SaturationRow[];
  verdict: Verdict;
  /**
   * How the run ended when it did not complete (run.json's `ended`, or what its status
   * says), with the rows that stand as evidence; absent for a completed run or a bare file.
   */
  ended?: RunEnding & { rowsStanding: string[] };
}
