// analysis.json: the saturation table, the verdict and its evidence. A stable contract:
// CI scripts read verdict.plateau.servedPerSec, verdict.firstLimit.resource,
// verdict.safeLimit.ratePerSec and verdict.recovery.seconds.

/** Requests that did not succeed, by class. */
export interface FailureCounts {
  /** 503 (load shedding). */
  shed: number;
  /** 429. */
  rateLimited: number;
  /** Other 5xx: defects. */
  serverErrors: number;
  /** 4xx other than 429. */
  clientErrors: number;
  /** k6 error code 1050. */
  timeouts: number;
  /** Other transport failures (status 0). */
  networkErrors: number;
}

/** One step of the saturation table. Null means "not measured". */
export interface SaturationRow {
  step: string;
  /** Target arrival rate of the step (null for drain, recovery, or untagged windows). */
  offeredPerSec: number | null;
  /** Requests the client started per second. */
  sentPerSec: number;
  /** Served per second: server-counted 200s, else client-counted 2xx. */
  servedPerSec: number;
  /** Where servedPerSec came from. */
  servedSource: 'server' | 'client';
  /** Seconds the rates are computed over. */
  seconds: number;
  requests: number;
  latencyMs: { med: number; p95: number; p99: number; max: number };
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
    cpuPct: number;
    /** Event-loop utilisation 0..1. */
    eventLoopUtilization: number;
  } | null;
  /** The row is not valid evidence (the generator failed to deliver the load). */
  invalid: string | null;
}

export const LIMIT_RESOURCES = ['pool', 'cpu', 'database', 'generator', 'unlisted', 'none'] as const;
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
  /** Query time has risen when its p95 reaches this multiple of the first step's. */
  queryRise: number;
}

/** The verdict on a run. */
export interface Verdict {
  plateau: { step: string; servedPerSec: number; offeredPerSec: number } | null;
  firstLimit: { resource: LimitResource; summary: string };
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
  };
  overload: string;
  recovery: { seconds: number | null; summary: string };
  database: { ordinarySlots: number; maxReplicas: number | null; summary: string } | null;
  nextLimit: string;
  /** What could not be known (no server side, no manifest, …). */
  notes: string[];
}

/** The `analysis.json` of a run directory. */
export interface AnalysisResult {
  kind: 'plateau.analysis';
  schemaVersion: 1;
  runId: string | null;
  /** Files the analysis read. */
  sources: { client: string | null; server: string | null; manifest: string | null };
  objectives: { p95Ms: number; failRate: number };
  /** The thresholds the verdict used (absent in analyses written before they were options). */
  criteria?: VerdictCriteria;
  table: SaturationRow[];
  verdict: Verdict;
}
