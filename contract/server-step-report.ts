// The server side of a capacity study: what `GET /steps` answers.

/** Latency distribution in milliseconds, from an HDR histogram (3 significant digits). */
export interface LatencySummary {
  count: number;
  /** Arithmetic mean (absent in reports written before schema 2). */
  mean?: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/**
 * Why a request was refused with 503 + Retry-After: `queue`, the wait queue was full;
 * `timeout`, it waited longer than the acquire timeout; `admission`, the admission gate was
 * busy (the event loop was late) and refused it at the door, before any work.
 */
export const SHED_REASONS = ['queue', 'timeout', 'admission'] as const;
export type ShedReason = (typeof SHED_REASONS)[number];

/**
 * Why a request was answered 503 + Retry-After for want of something it depends on, not for
 * overload: `database`, the database was unreachable (refused connections, ended sessions)
 * when the request needed it. Kept apart from SHED_REASONS because a shed is the service
 * protecting its capacity, and analysis reads sheds as overload; a dependency's absence says
 * nothing about capacity, and a step that met it is not evidence about capacity at all.
 */
export const UNAVAILABLE_REASONS = ['database'] as const;
export type UnavailableReason = (typeof UNAVAILABLE_REASONS)[number];

/**
 * Why a request was answered 504 (its caller's deadline had passed, or would before the
 * answer, so the work would be read by nobody): `wait`, the deadline passed while it waited
 * for a connection; `budget`, what was left of it was shorter than the work still to do.
 */
export const EXPIRE_REASONS = ['wait', 'budget'] as const;
export type ExpireReason = (typeof EXPIRE_REASONS)[number];

/** The header that carries the client's deadline: its timeout, ms from when it sent the request. */
export const DEADLINE_HEADER = 'x-request-timeout-ms';

/**
 * Pool figures integrated exactly over the time a step was current, from the pool's own
 * acquire/release events: mean = ∫ value dt ÷ currentMs.
 */
export interface PoolUtilisation {
  /** Wall time during which this step was the current step, ms. */
  currentMs: number;
  /** Time-weighted mean of connections checked out. */
  checkedOutMean: number;
  /** checkedOutMean ÷ pool max × 100; null when the pool max is unknown. */
  checkedOutPct: number | null;
  /** Highest number of connections checked out at once. */
  checkedOutMax: number;
  /** Time-weighted mean of requests waiting for a connection. */
  waitingMean: number;
  /** Highest number of requests waiting at once. */
  waitingMax: number;
}

/** Process CPU and event-loop figures while a step was current. */
export interface ProcessUtilisation {
  userMs: number;
  systemMs: number;
  /** (user + system) ÷ wall time × 100: 100 means one core fully busy. */
  cpuPct: number;
  /** Event-loop utilisation 0..1 (Node's performance.eventLoopUtilization). */
  eventLoopUtilization: number;
  /**
   * Event-loop delay while the step was current, ms (perf_hooks.monitorEventLoopDelay at
   * 10 ms resolution): how late a ready callback, such as a query result, ran. Absent
   * before schema 2 or when the service does not measure it.
   */
  loopDelayMs?: { p50: number; p95: number; max: number } | null;
}

/**
 * What completed while a step was the *current* step (the newest tag seen), whichever
 * step the requests were sent in. Under a queue that never refuses, requests of one step
 * complete seconds later, during the next: only these counts give a step's served rate.
 */
export interface StepWindow {
  /** Wall time during which this step was current, ms (the same as `pool.currentMs`). */
  ms: number;
  /** Successes (2xx) completed while this step was current. */
  served: number;
  /** Refusals (503) made while this step was current. */
  shed: number;
  /** Responses of any status completed while this step was current. */
  answered: number;
  /**
   * Queries completed while this step was current, whether or not their caller still
   * waited: the work the service did (absent in older reports).
   */
  queries?: number;
  /** served ÷ (ms ÷ 1000); null under 1 s. */
  servedPerSec: number | null;
}

/** Everything the service saw for one step tag. */
export interface StepBucket {
  /** The sanitised step key (`r020`, `drain`, `recovery`, `untagged`, `invalid`, `overflow`). */
  step: string;
  /** Epoch ms of the first and last request that carried this step. */
  firstRequestMs: number;
  lastRequestMs: number;
  /** Requests that arrived with this step. */
  requests: number;
  /** Successes: responses with a 2xx status. */
  served: number;
  /** served ÷ (lastRequestMs − firstRequestMs) in s; null when the window is under 1 s. */
  servedPerSec: number | null;
  /** Response count by HTTP status code (`"200"`, `"503"`, …). */
  statuses: Record<string, number>;
  /** Refusals by reason. */
  sheds: Record<ShedReason, number>;
  /** Requests answered 504 because their deadline had passed, by reason (absent before deadlines existed). */
  expired?: Partial<Record<ExpireReason, number>>;
  /**
   * Requests answered 503 because something they needed was unavailable, by reason (absent
   * from services that do not report it). Not in `sheds`: not a refusal for overload.
   */
  unavailable?: Partial<Record<UnavailableReason, number>>;
  /**
   * Time the database was unreachable while this step was current, ms (absent from services
   * that do not watch their database). Any time here makes the step no evidence of capacity.
   */
  databaseDownMs?: number;
  /**
   * Requests that found every limit full: the pool at its max and its wait queue at its cap
   * (absent before it was reported; always 0 with an unbounded queue, which is never full).
   */
  saturated?: number;
  /** Time spent waiting for a pool connection (around `pool.connect()`). */
  waitMs: LatencySummary;
  /** Time spent in database queries, as the service saw it (includes event-loop delay). */
  queryMs: LatencySummary;
  /**
   * The database's own time per query, as the database measured it (null when the service
   * does not report it; the reference service does). Unlike `queryMs` it does not grow
   * while the service's event loop is slow to read the result.
   */
  databaseMs?: LatencySummary | null;
  /** Arrival to last byte written, the whole handler. */
  handlerMs: LatencySummary;
  pool: PoolUtilisation;
  process: ProcessUtilisation;
  /** What completed during this step's window (absent before schema 2). */
  window?: StepWindow;
}

/** One second of the service's life. */
export interface TimelinePoint {
  /** Start of the second, epoch seconds. */
  t: number;
  /** The step current at the end of this second (`null` before any request). */
  step: string | null;
  served: number;
  shed: number;
  /** Responses of any status completed in this second (absent before schema 2). */
  answered?: number;
  /** 504s for callers whose deadline had passed, answered in this second (absent before deadlines). */
  expired?: number;
  /** Whether the admission gate was busy at the end of this second (absent without a gate). */
  admissionBusy?: boolean;
  /**
   * Milliseconds of this second the database was unreachable, 0–1000 (absent from services
   * that do not watch their database).
   */
  databaseDownMs?: number;
  /** Requests answered 503 in this second because the database was unreachable (absent likewise). */
  unavailable?: number;
  checkedOutMean: number;
  waitingMean: number;
  waitingMax: number;
  cpuPct: number;
  /**
   * p95 of the handler time (arrival to last byte) of the responses completed in this
   * second, ms, to about 4 % (a coarse log histogram; `handlerMs` per step is the exact
   * one); null in a second without responses; absent from services that predate it.
   */
  handlerP95Ms?: number | null;
}

/** The service settings that analysis needs to interpret the figures. */
export interface ServiceSettings {
  /** Connections the pool may hold; null when the service did not say. */
  poolMax: number | null;
  /** Requests allowed to wait for a connection before shedding; null when unbounded/unknown. */
  queueMax: number | null;
  /** Longest wait for a connection before shedding, ms; null when unbounded/unknown. */
  acquireTimeoutMs: number | null;
  /** Whether overload is refused (503) rather than queued. */
  shed: boolean | null;
  /** Any further settings a service reports (query ms, payload size, …). */
  extra: Record<string, string | number | boolean>;
}

/** The JSON body of `GET /steps`. */
export interface ServerStepReport {
  kind: 'plateau.server-steps';
  /** 2 added `window`, `databaseMs`, `loopDelayMs`, `mean` and `answered`; 1 is still read. */
  schemaVersion: 1 | 2;
  /** The service's own name, e.g. `statement-api`. */
  service: string;
  settings: ServiceSettings;
  /** When the recorder started (or was last reset), epoch ms. */
  startedMs: number;
  /** When this report was produced, epoch ms. */
  generatedMs: number;
  /** One bucket per step tag, in the order the steps were first seen. */
  steps: StepBucket[];
  /** The last seconds of activity, oldest first (bounded ring buffer). */
  timeline: TimelinePoint[];
}

/**
 * The JSON body of `GET /steps/live`: what a progress line needs, in constant time. A
 * harness polls this during the load; `GET /steps` summarises every histogram and is read
 * once, after it (see docs/instrumentation.md, "Reading it during a run").
 */
export interface ServerLiveReport {
  kind: 'plateau.server-live';
  schemaVersion: 1;
  /** When this report was produced, epoch ms. */
  generatedMs: number;
  /** The step current now (`null` before any tagged request). */
  step: string | null;
  /** Connections checked out and requests waiting for one, now. */
  checkedOut: number;
  waiting: number;
  /** The newest closed second of the timeline, or `null` before the first closes. */
  last: TimelinePoint | null;
  /** Requests that found every limit full since the last reset (absent in older services). */
  saturated?: number;
  /** The admission gate's state now; absent when the service has no gate. */
  admission?: 'normal' | 'busy';
  /**
   * Whether the service can reach its database now (`down`: it answers 503 reason
   * `database`); absent when the service does not watch its database.
   */
  database?: 'up' | 'down';
}
