// The meter families plateau recognises by name: one declarative entry each in METER_FAMILIES.
import type { OnFull, ResourceKind, ResourceRole, ResourceSecond } from '../../contract/index.ts';

export type Labels = Readonly<Record<string, string>>;

/**
 * One meter read for a resource: its series name, and how its labels line up with the
 * resource's identity. Every identity label must match, unless `labels` renames it (the
 * meter calls it otherwise) or sets it null (the meter does not carry it). The value is the
 * sum over the series that match (0 when the meter is there but `where` keeps none of them),
 * times `scale`.
 */
export interface MeterRef {
  name: string;
  labels?: Readonly<Record<string, string | null>>;
  /** Only series with these label values are the meter's (a declared selector's matchers): none, no value. */
  match?: Readonly<Record<string, string>>;
  /** Only the series whose label has one of these values count; the meter is there (0) when none do. */
  where?: Readonly<Record<string, readonly string[]>>;
  scale?: number;
}

/**
 * How a figure of a resource second is read:
 * - `gauge`: the meters' values combined (sum or product) at each reading, then the mean of
 *   the readings in the second; a value `unbounded` says is no limit reads null;
 * - `rate`: a counter's increase since the previous reading ÷ the seconds between them
 *   (a counter that went down restarted: its new value is the increase);
 * - `ratio`: Δnumerator ÷ Δdenominator × scale, over the readings of the second, only when
 *   the denominator grew (a summary's mean: Δsum ÷ Δcount);
 * - `first`: the first of several ways that gives any figure for the resource, chosen once
 *   per resource (a process publishes one of its CPU meters, not a mix).
 */
export type Reading =
  | {
      read: 'gauge';
      meters: readonly MeterRef[];
      combine: 'sum' | 'product';
      unbounded?: (value: number) => boolean;
    }
  | { read: 'rate'; meter: MeterRef }
  | { read: 'ratio'; numerator: MeterRef; denominator: MeterRef; scale: number }
  | { read: 'first'; of: readonly Reading[] };

/** A breakdown kept beside the figures (`ResourceSecond.extra`): one named gauge, or one per value of a label. */
export type ExtraReading =
  | { key: string; read: Reading }
  | { eachValueOf: string; meter: MeterRef; key: (value: string) => string };

/** The figures of a resource second a family can fill. */
export type SecondField = Exclude<keyof ResourceSecond, 't' | 'extra'>;
export const SECOND_FIELDS = [
  'inUse',
  'capacity',
  'waiting',
  'waitMs',
  'holdMs',
  'refused',
  'acquired',
] as const satisfies readonly SecondField[];

/** One family of meters: what its resource is, and how each figure is read. */
export interface MeterFamily {
  family: string;
  kind: ResourceKind;
  role: ResourceRole;
  onFull: OnFull;
  /** On the request path: 0 request threads and executors … 3 the database. */
  position: number;
  /** The labels that make separate resources (an `instance` label, and the source, always do). */
  identity: readonly string[];
  /** What people read, from the identity labels. */
  name: (labels: Labels) => string;
  /** Meter names whose series make a resource (default: the first meter `inUse` reads). */
  recognisedBy?: readonly string[];
  inUse?: Reading;
  capacity?: Reading;
  waiting?: Reading;
  waitMs?: Reading;
  holdMs?: Reading;
  refused?: Reading;
  acquired?: Reading;
  extra?: readonly ExtraReading[];
  /** What the family's meters cannot say, noted once in the record when the family is seen. */
  caveat?: string;
}

/** A gauge: its value at each reading, the mean of a second's readings. */
export function gauge(
  name: string,
  options: Omit<MeterRef, 'name'> & { unbounded?: (value: number) => boolean } = {},
): Reading & { read: 'gauge' } {
  const { unbounded, ...ref } = options;
  return { read: 'gauge', meters: [{ name, ...ref }], combine: 'sum', ...(unbounded ? { unbounded } : {}) };
}

/** The sum of gauges read at the same moment (a queue's cap: queued + remaining). */
export function sumOf(
  terms: readonly (Reading & { read: 'gauge' })[],
  options: { unbounded?: (value: number) => boolean } = {},
): Reading {
  return { read: 'gauge', meters: terms.flatMap((t) => t.meters), combine: 'sum', ...options };
}

/** The product of gauges read at the same moment (a share of all cores × the cores). */
export function productOf(...terms: readonly (Reading & { read: 'gauge' })[]): Reading {
  return { read: 'gauge', meters: terms.flatMap((t) => t.meters), combine: 'product' };
}

/** A counter read as its increase per second. */
export function counter(name: string, options: Omit<MeterRef, 'name'> = {}): Reading {
  return { read: 'rate', meter: { name, ...options } };
}

/** A summary's (or timer's) mean over each second: Δ`base_sum` ÷ Δ`base_count` × scale. */
export function summaryMean(
  base: string,
  scale: number,
  options: Omit<MeterRef, 'name' | 'scale'> = {},
): Reading {
  return {
    read: 'ratio',
    numerator: { name: `${base}_sum`, ...options },
    denominator: { name: `${base}_count`, ...options },
    scale,
  };
}

/** Two counters' increases divided: Δnumerator ÷ Δdenominator × scale. */
export function meanOfIncreases(
  numerator: string,
  denominator: string,
  scale: number,
  options: Omit<MeterRef, 'name' | 'scale'> = {},
): Reading {
  return {
    read: 'ratio',
    numerator: { name: numerator, ...options },
    denominator: { name: denominator, ...options },
    scale,
  };
}

/** The first of several readings that gives the resource any figure. */
export function firstOf(...of: readonly Reading[]): Reading {
  return { read: 'first', of };
}

/** Java's Integer.MAX_VALUE, what a ThreadPoolExecutor reports for an unbounded pool or queue. */
const JAVA_INT_MAX = 2 ** 31 - 1;
const atJavaIntMax = (value: number): boolean => value >= JAVA_INT_MAX;

/** PostgreSQL wait event types that are contention inside the database (not a client or an idle background process). */
const CONTENTION_WAITS = ['Lock', 'LWLock', 'IO', 'BufferPin', 'IPC'] as const;

/**
 * Every family plateau recognises. Adding a family is adding one entry; each says where its
 * meter names come from.
 */
export const METER_FAMILIES: readonly MeterFamily[] = [
  {
    // HikariCP's MicrometerMetricsTracker (com.zaxxer.hikari.metrics.micrometer) under
    // Micrometer's Prometheus naming: gauges hikaricp.connections{,.active,.idle,.pending,.max,.min},
    // counter hikaricp.connections.timeout (→ _total), timers hikaricp.connections.acquire and
    // .usage (→ _seconds_{count,sum,max}); tag `pool`. As Spring Boot's /actuator/prometheus shows them.
    // HikariCP 2.7's tracker records a timed-out wait in the acquire timer too, so there
    // `acquired` counts the timeouts with the acquisitions.
    family: 'hikaricp',
    kind: 'slots',
    role: 'pool',
    onFull: 'waits',
    position: 1,
    identity: ['pool'],
    name: (l) => `hikaricp pool ${l.pool}`,
    inUse: gauge('hikaricp_connections_active'),
    capacity: gauge('hikaricp_connections_max'),
    waiting: gauge('hikaricp_connections_pending'),
    waitMs: summaryMean('hikaricp_connections_acquire_seconds', 1000),
    holdMs: summaryMean('hikaricp_connections_usage_seconds', 1000),
    refused: counter('hikaricp_connections_timeout_total'),
    acquired: counter('hikaricp_connections_acquire_seconds_count'),
    extra: [{ key: 'open', read: gauge('hikaricp_connections') }],
  },
  {
    // HikariCP's own Prometheus tracker (com.zaxxer.hikari.metrics.prometheus:
    // HikariCPCollector's gauges and PrometheusMetricsTracker's counter and summaries), for
    // services on the Prometheus client without Micrometer; label `pool`. Its acquire summary
    // also observes the waits that timed out, so `acquired` counts those too.
    family: 'hikaricp-prometheus',
    kind: 'slots',
    role: 'pool',
    onFull: 'waits',
    position: 1,
    identity: ['pool'],
    name: (l) => `hikaricp pool ${l.pool}`,
    inUse: gauge('hikaricp_active_connections'),
    capacity: gauge('hikaricp_max_connections'),
    waiting: gauge('hikaricp_pending_threads'),
    waitMs: summaryMean('hikaricp_connection_acquired_nanos', 1e-6),
    holdMs: summaryMean('hikaricp_connection_usage_millis', 1),
    refused: counter('hikaricp_connection_timeout_total'),
    acquired: counter('hikaricp_connection_acquired_nanos_count'),
  },
  {
    // Micrometer's ExecutorServiceMetrics (binder.jvm) for a ThreadPoolExecutor: executor.active,
    // .pool.size, .pool.max (threads), .queued, .queue.remaining (tasks), .completed (a function
    // counter → _tasks_total); tag `name`. The timers executor and executor.idle (→ executor_seconds,
    // executor_idle_seconds) exist when the executor is wrapped by TimedExecutorService: idle is
    // the time a task waited in the queue. executor_rejected_tasks_total is not Micrometer's own
    // but the name the usual rejection-handler wrappers register (executor.rejected, tasks).
    // An unbounded pool reports Integer.MAX_VALUE threads: no capacity.
    family: 'micrometer-executor',
    kind: 'slots',
    role: 'threads',
    onFull: 'queues',
    position: 0,
    identity: ['name'],
    name: (l) => `executor ${l.name}`,
    inUse: gauge('executor_active_threads'),
    capacity: gauge('executor_pool_max_threads', { unbounded: atJavaIntMax }),
    waiting: gauge('executor_queued_tasks'),
    waitMs: summaryMean('executor_idle_seconds', 1000),
    holdMs: summaryMean('executor_seconds', 1000),
    refused: counter('executor_rejected_tasks_total'),
    acquired: counter('executor_completed_tasks_total'),
    extra: [{ key: 'threads', read: gauge('executor_pool_size_threads') }],
  },
  {
    // The same executor's queue, when Micrometer publishes its remaining capacity: its cap is
    // queued + remaining (a LinkedBlockingQueue without a bound sums to Integer.MAX_VALUE:
    // unbounded). A full bounded queue hands the task to the rejection policy.
    family: 'micrometer-executor-queue',
    kind: 'queue',
    role: 'queue',
    onFull: 'refused',
    position: 0,
    identity: ['name'],
    name: (l) => `executor ${l.name} queue`,
    recognisedBy: ['executor_queue_remaining_tasks'],
    inUse: gauge('executor_queued_tasks'),
    capacity: sumOf([gauge('executor_queued_tasks'), gauge('executor_queue_remaining_tasks')], {
      unbounded: atJavaIntMax,
    }),
    refused: counter('executor_rejected_tasks_total'),
  },
  {
    // Micrometer's TomcatMetrics (binder.tomcat): tomcat.threads.busy, .current,
    // .config.max (threads), and the connector's global request timer tomcat.global.request
    // (→ tomcat_global_request_seconds_{count,sum}); tag `name` (the connector, http-nio-8080).
    // Spring Boot publishes them with server.tomcat.mbeanregistry.enabled. A request finding
    // every thread busy waits in the connector's accept queue.
    family: 'tomcat',
    kind: 'slots',
    role: 'threads',
    onFull: 'queues',
    position: 0,
    identity: ['name'],
    name: (l) => `tomcat threads ${l.name}`,
    inUse: gauge('tomcat_threads_busy_threads'),
    capacity: gauge('tomcat_threads_config_max_threads'),
    holdMs: summaryMean('tomcat_global_request_seconds', 1000),
    acquired: counter('tomcat_global_request_seconds_count'),
    extra: [{ key: 'threads', read: gauge('tomcat_threads_current_threads') }],
  },
  {
    // Micrometer's JettyServerThreadPoolMetrics (binder.jetty): gauges jetty.threads.busy,
    // .config.max, .current, .jobs (jobs queued waiting for a thread), registered without a
    // base unit, so without a suffix; only the tags the application passes.
    family: 'jetty',
    kind: 'slots',
    role: 'threads',
    onFull: 'queues',
    position: 0,
    identity: [],
    name: () => 'jetty threads',
    inUse: gauge('jetty_threads_busy'),
    capacity: gauge('jetty_threads_config_max'),
    waiting: gauge('jetty_threads_jobs'),
    extra: [{ key: 'threads', read: gauge('jetty_threads_current') }],
  },
  {
    // client_golang's collectors.NewDBStatsCollector (prometheus/collectors/dbstats_collector.go):
    // go_sql_{max_open,open,in_use,idle}_connections gauges, go_sql_wait_count_total and
    // go_sql_wait_duration_seconds_total counters; const label `db_name`. MaxOpenConns 0 is
    // no limit.
    family: 'go-sql',
    kind: 'slots',
    role: 'pool',
    onFull: 'waits',
    position: 1,
    identity: ['db_name'],
    name: (l) => `go database/sql pool ${l.db_name}`,
    inUse: gauge('go_sql_in_use_connections'),
    capacity: gauge('go_sql_max_open_connections', { unbounded: (v) => v <= 0 }),
    waitMs: meanOfIncreases('go_sql_wait_duration_seconds_total', 'go_sql_wait_count_total', 1000),
    extra: [
      { key: 'open', read: gauge('go_sql_open_connections') },
      { key: 'idle', read: gauge('go_sql_idle_connections') },
    ],
    caveat:
      "database/sql's stats count waits but publish no gauge of callers waiting, so waiting is unknown; " +
      'the wait time is Δwait_duration ÷ Δwait_count',
  },
  {
    // Debian's prometheus-pgbouncer-exporter 1.7 (prometheus_pgbouncer_exporter/collectors.py):
    // SHOW POOLS as pgbouncer_active_clients and pgbouncer_waiting_clients{database,user},
    // SHOW DATABASES as pgbouncer_pool_size and pgbouncer_reserve_pool{database}. It publishes
    // no server connections in use (sv_active), and cl_active counts clients idle between
    // transactions too, so in use is unknown: waiting clients show the pool full.
    family: 'pgbouncer',
    kind: 'slots',
    role: 'pool',
    onFull: 'waits',
    position: 2,
    identity: ['database', 'user'],
    name: (l) => `pgbouncer pool ${l.database}/${l.user}`,
    recognisedBy: ['pgbouncer_waiting_clients'],
    capacity: gauge('pgbouncer_pool_size', { labels: { user: null } }),
    waiting: gauge('pgbouncer_waiting_clients'),
    extra: [
      { key: 'clients active', read: gauge('pgbouncer_active_clients') },
      { key: 'reserve pool', read: gauge('pgbouncer_reserve_pool', { labels: { user: null } }) },
    ],
    caveat:
      'Debian’s pgbouncer exporter publishes no server connections in use (sv_active), so in use is unknown and ' +
      'waiting clients are the sign of a full pool; it also fails to start against pgbouncer 1.8 and later ' +
      '(SHOW STATS lost total_requests)',
  },
  {
    // prometheus-community/pgbouncer_exporter (collector.go): SHOW POOLS as
    // pgbouncer_pools_{server_active,client_waiting}_connections{database,user}, SHOW DATABASES
    // as pgbouncer_databases_pool_size{name,…} (its `name` is the pool's database; its
    // `database` the server's), SHOW STATS as pgbouncer_stats_*_total{database}. The stats are
    // per database: with several users on one database they are the database's.
    family: 'pgbouncer-exporter',
    kind: 'slots',
    role: 'pool',
    onFull: 'waits',
    position: 2,
    identity: ['database', 'user'],
    name: (l) => `pgbouncer pool ${l.database}/${l.user}`,
    inUse: gauge('pgbouncer_pools_server_active_connections'),
    capacity: gauge('pgbouncer_databases_pool_size', { labels: { database: 'name', user: null } }),
    waiting: gauge('pgbouncer_pools_client_waiting_connections'),
    waitMs: meanOfIncreases(
      'pgbouncer_stats_client_wait_seconds_total',
      'pgbouncer_stats_sql_transactions_pooled_total',
      1000,
      { labels: { user: null } },
    ),
    acquired: counter('pgbouncer_stats_sql_transactions_pooled_total', { labels: { user: null } }),
  },
  {
    // node-postgres as plateau's own reference service publishes it
    // (target-service/instrumentation/metrics.ts, prom-client).
    family: 'node-postgres',
    kind: 'slots',
    role: 'pool',
    onFull: 'waits',
    position: 1,
    identity: [],
    name: () => 'node-postgres pool',
    inUse: gauge('db_pool_connections_in_use'),
    capacity: gauge('db_pool_connections_max'),
    waiting: gauge('db_pool_waiting_requests'),
    refused: counter('db_pool_saturated_total'),
    extra: [{ key: 'open', read: gauge('db_pool_connections_total') }],
  },
  {
    // A process's CPU: process_cpu_seconds_total is the Prometheus clients' standard counter
    // (client_golang, prom-client, client_python, prometheus-net); Micrometer's ProcessorMetrics
    // gives process.cpu.time (→ process_cpu_time_ns_total, Micrometer 1.12+) and
    // process.cpu.usage (0..1 of all cores) with system.cpu.count (the cores the JVM may use).
    // process_cpu_count is read first when a service publishes it (no client library does).
    family: 'process-cpu',
    kind: 'cpu',
    role: 'cpu',
    onFull: 'queues',
    position: 0,
    identity: [],
    name: () => 'process cpu',
    recognisedBy: ['process_cpu_seconds_total', 'process_cpu_time_ns_total', 'process_cpu_usage'],
    inUse: firstOf(
      counter('process_cpu_seconds_total'),
      counter('process_cpu_time_ns_total', { scale: 1e-9 }),
      productOf(gauge('process_cpu_usage'), gauge('system_cpu_count')),
    ),
    capacity: firstOf(gauge('process_cpu_count'), gauge('system_cpu_count')),
  },
  {
    // The bus executor of the seed on limits in series (evento server): gauges
    // evento_server_bus_executor_{pool_size,max,active,queue_depth,saturated}. The seed names
    // `saturated` without saying more: it is kept as an extra gauge, not read as refusals.
    family: 'evento-bus-executor',
    kind: 'slots',
    role: 'threads',
    onFull: 'queues',
    position: 1,
    identity: [],
    name: () => 'evento bus executor',
    inUse: gauge('evento_server_bus_executor_active'),
    capacity: gauge('evento_server_bus_executor_max'),
    waiting: gauge('evento_server_bus_executor_queue_depth'),
    extra: [
      { key: 'threads', read: gauge('evento_server_bus_executor_pool_size') },
      { key: 'saturated', read: gauge('evento_server_bus_executor_saturated') },
    ],
  },
  {
    // PostgreSQL as plateau's own PostgreSQL source publishes it (harness/sources): slots in
    // use of max_connections less the reserved ones; backends by state and the active ones
    // waiting by wait event type. Waiting counts the contention types (Lock, LWLock, IO,
    // BufferPin, IPC); every type is kept as `waiting <type>`. A connection past the max is
    // refused.
    family: 'postgres',
    kind: 'slots',
    role: 'database',
    onFull: 'refused',
    position: 3,
    identity: [],
    name: () => 'postgres slots',
    inUse: gauge('plateau_pg_connections_in_use'),
    capacity: gauge('plateau_pg_connections_max'),
    waiting: gauge('plateau_pg_backends_waiting', { where: { wait_event_type: CONTENTION_WAITS } }),
    extra: [
      {
        eachValueOf: 'wait_event_type',
        meter: { name: 'plateau_pg_backends_waiting' },
        key: (v) => `waiting ${v}`,
      },
      { eachValueOf: 'state', meter: { name: 'plateau_pg_backends' }, key: (v) => `backends ${v}` },
    ],
  },
  {
    // The database processes' CPU from the same source, when they run on plateau's host.
    family: 'postgres-cpu',
    kind: 'cpu',
    role: 'cpu',
    onFull: 'queues',
    position: 3,
    identity: [],
    name: () => 'postgres cpu',
    inUse: counter('plateau_pg_cpu_seconds_total'),
    capacity: gauge('plateau_pg_host_cpu_count'),
  },
];

/** Every meter name a reading reads. */
export function readingMeterNames(reading: Reading): string[] {
  switch (reading.read) {
    case 'gauge':
      return reading.meters.map((m) => m.name);
    case 'rate':
      return [reading.meter.name];
    case 'ratio':
      return [reading.numerator.name, reading.denominator.name];
    case 'first':
      return reading.of.flatMap(readingMeterNames);
  }
}

/** The meter names whose series make a resource of the family. */
export function recognisingNames(family: MeterFamily): readonly string[] {
  if (family.recognisedBy) return family.recognisedBy;
  if (!family.inUse) return [];
  const first = family.inUse.read === 'first' ? family.inUse.of[0] : family.inUse;
  return first ? readingMeterNames(first).slice(0, 1) : [];
}

/** Every meter name a family reads. */
export function familyMeterNames(family: MeterFamily): Set<string> {
  const names = new Set<string>(recognisingNames(family));
  for (const field of SECOND_FIELDS) {
    const reading = family[field];
    if (reading) for (const name of readingMeterNames(reading)) names.add(name);
  }
  for (const extra of family.extra ?? [])
    for (const name of 'read' in extra ? readingMeterNames(extra.read) : [extra.meter.name]) names.add(name);
  return names;
}
