// The server side from whatever a service already publishes: meter scrapes (Prometheus text
// endpoints, a Prometheus server, PostgreSQL's views) and the resources recognised in them.

/** One sample of a Prometheus meter: its full series name (`_total`, `_sum`, `_bucket` kept) and labels. */
export interface MeterSample {
  name: string;
  labels: Record<string, string>;
  /** The value; NaN and ±Inf are dropped by the readers before they get here. */
  value: number;
}

/** Kinds of source of meters, each one file under `harness/sources/`. */
export const METER_SOURCE_KINDS = ['metrics', 'prometheus', 'postgres'] as const;
export type MeterSourceKind = (typeof METER_SOURCE_KINDS)[number];

/**
 * One reading of one source at one moment: what a scrape of a `/metrics` endpoint returned,
 * one timestamp of a Prometheus `query_range` answer, one poll of `pg_stat_activity`.
 * Written one per line to `meters.ndjson` in the run directory, so analysis can be redone
 * from the run directory alone.
 */
export interface MeterScrape {
  kind: 'plateau.meter-scrape';
  /** The source's label, e.g. `metrics http://127.0.0.1:8080/actuator/prometheus`. */
  source: string;
  /** When the reading was taken (a Prometheus server's sample time), epoch ms on plateau's clock. */
  atMs: number;
  samples: MeterSample[];
}

/** How a source fared over the run, for the manifest and the record's notes. */
export interface MeterSourceStatus {
  source: string;
  kind: MeterSourceKind;
  /** Readings attempted and those that failed. */
  attempts: number;
  failures: number;
  /** The first failure and the last, in words (`HTTP 500`, `not Prometheus text: …`, `timed out after 800 ms`). */
  firstError: string | null;
  lastError: string | null;
  /** Median time a reading took, ms (the cost on the service is measured in bench:metrics-scrape). */
  readMsMedian: number | null;
  /** Series dropped because the source had more than the cap, with the cap. */
  seriesCapped: { cap: number; dropped: number } | null;
  /** Meter names seen that no family or declared resource reads (at most 50, sorted). */
  unrecognised: string[];
  /**
   * Readings not started because the one before was still in flight (a slow endpoint is
   * never asked twice at once). Absent or 0 for sources that read once.
   */
  skipped?: number;
  /** Samples dropped for a NaN or ±Inf value, summed over the readings. */
  nonFinite?: number;
  /** Lines of otherwise good bodies that did not parse, summed over the readings (the rest were kept). */
  invalidLines?: number;
}

/** What a resource is: slots in use of a max (with waiters), a queue's depth of its cap, CPU busy of its cores. */
export const RESOURCE_KINDS = ['slots', 'queue', 'cpu'] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];

/**
 * What the verdict calls a resource when it is the first limit. `pool`: connections
 * (HikariCP, Go database/sql, pgbouncer, node-postgres); `threads`: request or executor
 * threads; `queue`: a bounded queue; `cpu`: a process's or a host's cores; `database`:
 * the database's own slots and waits.
 */
export const RESOURCE_ROLES = ['pool', 'threads', 'queue', 'cpu', 'database'] as const;
export type ResourceRole = (typeof RESOURCE_ROLES)[number];

/** What happens to a request that finds the resource full. */
export const ON_FULL = ['waits', 'refused', 'queues', 'unknown'] as const;
export type OnFull = (typeof ON_FULL)[number];

/**
 * One second of one resource. Gauges are the mean of the readings in the second (the last
 * reading carried into a second without one is not invented: the second is absent);
 * counters are the increase over the second (a reset, where a service restarted, counts
 * from zero). Null: the resource's meters do not give that figure.
 *
 * - slots: `inUse` of `capacity`, `waiting` callers
 * - queue: `inUse` is the depth, `capacity` the cap (null: unbounded)
 * - cpu:   `inUse` is cores busy, `capacity` the cores it may use
 */
export interface ResourceSecond {
  /** Epoch second (plateau's clock). */
  t: number;
  inUse: number | null;
  capacity: number | null;
  waiting: number | null;
  /** Mean time a caller waited for the resource in this second, ms. */
  waitMs: number | null;
  /** Mean time a holder held it in this second, ms (HikariCP usage, Go's in-use time…). */
  holdMs: number | null;
  /** Callers refused or timed out waiting in this second. */
  refused: number | null;
  /** Acquisitions (or completions) in this second: what the resource served. */
  acquired: number | null;
  /**
   * Breakdowns the family reads beside the figures above, by a name people read, e.g.
   * `waiting LWLock` (PostgreSQL backends waiting, by wait event type) or `backends idle in
   * transaction`: gauges are the mean of the second, like the fields above. Absent: none.
   */
  extra?: Record<string, number>;
}

/** One resource as recognised in the meters. */
export interface ResourceSeries {
  /** Stable key: family and identifying labels, e.g. `hikaricp{pool="orders",instance="a:8080"}`. */
  id: string;
  /** What people read: `hikaricp pool orders`, `executor http`, `pgbouncer pool app`. */
  name: string;
  kind: ResourceKind;
  role: ResourceRole;
  /** The meter family that recognised it (`hikaricp`, `micrometer-executor`, …), or `declared`. */
  family: string;
  /** The source label its meters came from. */
  source: string;
  onFull: OnFull;
  /**
   * Where it sits on the request path, from the edge (0: request threads, executors) to the
   * database (3): of two resources full at once the deeper one is the cause, the shallower
   * one's holders waiting on it.
   */
  position: number;
  seconds: ResourceSecond[];
}

/** A resource declared in `plateau.config` (`resources: [...]`), each value a selector or PromQL. */
export interface DeclaredResource {
  name: string;
  kind: ResourceKind;
  /** Default: `pool` for slots, `queue` for a queue, `cpu` for cpu. */
  role?: ResourceRole;
  /** Default: 1 (between the request threads and the database). */
  position?: number;
  onFull?: OnFull;
  /** slots: in use; cpu: cores busy (a rate of CPU seconds). */
  inUse?: string;
  /** slots: the max; cpu: cores. */
  max?: string;
  /** slots: callers waiting. */
  waiting?: string;
  /** queue: its depth and its cap. */
  depth?: string;
  cap?: string;
}

/**
 * A resource's figures over one step's window, for the saturation table. Means are over
 * the seconds of the window the resource had readings in (`seconds`).
 */
export interface ResourceStepFigures {
  id: string;
  name: string;
  kind: ResourceKind;
  role: ResourceRole;
  position: number;
  seconds: number;
  inUseMean: number | null;
  inUseMax: number | null;
  capacity: number | null;
  /** inUseMean ÷ capacity × 100; null when either is unknown. */
  utilisationPct: number | null;
  waitingMean: number | null;
  waitingMax: number | null;
  waitMsMean: number | null;
  holdMsMean: number | null;
  refused: number | null;
  acquiredPerSec: number | null;
  /** The means of each `extra` breakdown over the seconds that had it. Absent: none. */
  extra?: Record<string, number>;
}

/** `resources.json` in a run directory: the resources the meters showed, and how each source fared. */
export interface ResourcesReport {
  kind: 'plateau.resources';
  schemaVersion: 1;
  sources: MeterSourceStatus[];
  resources: ResourceSeries[];
  /** Declared resources whose series never appeared, and other things to say, in words. */
  notes: string[];
}
