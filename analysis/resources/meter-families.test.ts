import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MeterScrape, ResourceSecond } from '../../contract/index.ts';
import { familyMeterNames, METER_FAMILIES, recognisingNames } from './meter-families.ts';
import { parsePrometheusText } from './prometheus-text.ts';
import { resourcesFromScrapes } from './resource-series.ts';

const T0 = 1_700_000_000;

/** Two scrapes of one endpoint a second apart: `page(0)` then `page(1)`, counters grown by then. */
function twoScrapes(page: (k: number) => string): MeterScrape[] {
  return [0, 1].map((k) => {
    const parsed = parsePrometheusText(page(k));
    assert.equal(parsed.error, null);
    assert.equal(parsed.dropped.invalidLines, 0, parsed.firstInvalidLine ?? '');
    return {
      kind: 'plateau.meter-scrape',
      source: 'metrics http://127.0.0.1:8080',
      atMs: (T0 + k) * 1000 + 200,
      samples: parsed.samples,
    };
  });
}

/** A second with the figures given and the rest null. */
function second(figures: Partial<ResourceSecond>): ResourceSecond {
  return {
    t: T0 + 1,
    inUse: null,
    capacity: null,
    waiting: null,
    waitMs: null,
    holdMs: null,
    refused: null,
    acquired: null,
    ...figures,
  };
}

interface FamilyCase {
  what: string;
  page: (k: number) => string;
  /** Every resource recognised, in the order returned (position, then name), with its second T0 + 1. */
  expected: {
    family: string;
    name: string;
    kind: string;
    role: string;
    position: number;
    at: ResourceSecond;
  }[];
}

const CASES: FamilyCase[] = [
  {
    // Spring Boot 3 /actuator/prometheus, HikariCP under Micrometer: 80 acquisitions in the
    // second took 3.2 s to acquire (40 ms each) and 4 s held (50 ms each), 3 timed out
    what: 'HikariCP under Micrometer',
    page: (k) => `# HELP hikaricp_connections Total connections
# TYPE hikaricp_connections gauge
hikaricp_connections{pool="orders"} 4.0
# HELP hikaricp_connections_acquire_seconds Connection acquire time
# TYPE hikaricp_connections_acquire_seconds summary
hikaricp_connections_acquire_seconds_count{pool="orders"} ${1000 + 80 * k}
hikaricp_connections_acquire_seconds_sum{pool="orders"} ${12 + 3.2 * k}
# HELP hikaricp_connections_acquire_seconds_max Connection acquire time
# TYPE hikaricp_connections_acquire_seconds_max gauge
hikaricp_connections_acquire_seconds_max{pool="orders"} 0.09
# HELP hikaricp_connections_active Active connections
# TYPE hikaricp_connections_active gauge
hikaricp_connections_active{pool="orders"} 4.0
# HELP hikaricp_connections_idle Idle connections
# TYPE hikaricp_connections_idle gauge
hikaricp_connections_idle{pool="orders"} 0.0
# HELP hikaricp_connections_max Max connections
# TYPE hikaricp_connections_max gauge
hikaricp_connections_max{pool="orders"} 4.0
# HELP hikaricp_connections_min Min connections
# TYPE hikaricp_connections_min gauge
hikaricp_connections_min{pool="orders"} 4.0
# HELP hikaricp_connections_pending Pending threads
# TYPE hikaricp_connections_pending gauge
hikaricp_connections_pending{pool="orders"} 12.0
# HELP hikaricp_connections_timeout_total Connection timeout total count
# TYPE hikaricp_connections_timeout_total counter
hikaricp_connections_timeout_total{pool="orders"} ${2 + 3 * k}
# HELP hikaricp_connections_usage_seconds Connection usage time
# TYPE hikaricp_connections_usage_seconds summary
hikaricp_connections_usage_seconds_count{pool="orders"} ${1000 + 80 * k}
hikaricp_connections_usage_seconds_sum{pool="orders"} ${50 + 4 * k}
`,
    expected: [
      {
        family: 'hikaricp',
        name: 'hikaricp pool orders',
        kind: 'slots',
        role: 'pool',
        position: 1,
        at: second({
          inUse: 4,
          capacity: 4,
          waiting: 12,
          waitMs: 40,
          holdMs: 50,
          refused: 3,
          acquired: 80,
          extra: { open: 4 },
        }),
      },
    ],
  },
  {
    // HikariCP's own Prometheus tracker (no Micrometer): acquire in ns, usage in ms
    what: "HikariCP's Prometheus tracker",
    page: (k) => `# HELP hikaricp_active_connections Active connections
# TYPE hikaricp_active_connections gauge
hikaricp_active_connections{pool="billing",} 8.0
# HELP hikaricp_idle_connections Idle connections
# TYPE hikaricp_idle_connections gauge
hikaricp_idle_connections{pool="billing",} 2.0
# HELP hikaricp_pending_threads Pending threads
# TYPE hikaricp_pending_threads gauge
hikaricp_pending_threads{pool="billing",} 0.0
# HELP hikaricp_max_connections Max connections
# TYPE hikaricp_max_connections gauge
hikaricp_max_connections{pool="billing",} 10.0
# HELP hikaricp_connection_timeout_total Connection timeout total count
# TYPE hikaricp_connection_timeout_total counter
hikaricp_connection_timeout_total{pool="billing",} 0.0
# HELP hikaricp_connection_acquired_nanos Connection acquired time (ns)
# TYPE hikaricp_connection_acquired_nanos summary
hikaricp_connection_acquired_nanos{pool="billing",quantile="0.5",} 21000.0
hikaricp_connection_acquired_nanos_count{pool="billing",} ${500 + 50 * k}
hikaricp_connection_acquired_nanos_sum{pool="billing",} ${1.0e7 + 2.5e6 * k}
# HELP hikaricp_connection_usage_millis Connection usage (ms)
# TYPE hikaricp_connection_usage_millis summary
hikaricp_connection_usage_millis_count{pool="billing",} ${500 + 50 * k}
hikaricp_connection_usage_millis_sum{pool="billing",} ${7000 + 600 * k}
`,
    expected: [
      {
        family: 'hikaricp-prometheus',
        name: 'hikaricp pool billing',
        kind: 'slots',
        role: 'pool',
        position: 1,
        at: second({
          inUse: 8,
          capacity: 10,
          waiting: 0,
          waitMs: 0.05,
          holdMs: 12,
          refused: 0,
          acquired: 50,
        }),
      },
    ],
  },
  {
    // Micrometer executors: a bounded ThreadPoolTaskExecutor (8 threads, queue of 100) and
    // Spring's unbounded applicationTaskExecutor (Integer.MAX_VALUE threads and queue)
    what: 'Micrometer executors and their queues',
    page: (
      k,
    ) => `# HELP executor_active_threads The approximate number of threads that are actively executing tasks
# TYPE executor_active_threads gauge
executor_active_threads{name="render"} 8.0
executor_active_threads{name="applicationTaskExecutor"} 1.0
# HELP executor_completed_tasks_total The approximate total number of tasks that have completed execution
# TYPE executor_completed_tasks_total counter
executor_completed_tasks_total{name="render"} ${9000 + 40 * k}
executor_completed_tasks_total{name="applicationTaskExecutor"} 12.0
# HELP executor_pool_core_threads The core number of threads for the pool
# TYPE executor_pool_core_threads gauge
executor_pool_core_threads{name="render"} 8.0
executor_pool_core_threads{name="applicationTaskExecutor"} 8.0
# HELP executor_pool_max_threads The maximum allowed number of threads in the pool
# TYPE executor_pool_max_threads gauge
executor_pool_max_threads{name="render"} 8.0
executor_pool_max_threads{name="applicationTaskExecutor"} 2.147483647E9
# HELP executor_pool_size_threads The current number of threads in the pool
# TYPE executor_pool_size_threads gauge
executor_pool_size_threads{name="render"} 8.0
executor_pool_size_threads{name="applicationTaskExecutor"} 2.0
# HELP executor_queue_remaining_tasks The number of additional elements that this queue can ideally accept without blocking
# TYPE executor_queue_remaining_tasks gauge
executor_queue_remaining_tasks{name="render"} 70.0
executor_queue_remaining_tasks{name="applicationTaskExecutor"} 2.147483647E9
# HELP executor_queued_tasks The approximate number of tasks that are queued for execution
# TYPE executor_queued_tasks gauge
executor_queued_tasks{name="render"} 30.0
executor_queued_tasks{name="applicationTaskExecutor"} 0.0
`,
    expected: [
      {
        family: 'micrometer-executor',
        name: 'executor applicationTaskExecutor',
        kind: 'slots',
        role: 'threads',
        position: 0,
        // an unbounded pool: no capacity
        at: second({ inUse: 1, waiting: 0, acquired: 0, extra: { threads: 2 } }),
      },
      {
        family: 'micrometer-executor-queue',
        name: 'executor applicationTaskExecutor queue',
        kind: 'queue',
        role: 'queue',
        position: 0,
        at: second({ inUse: 0 }), // an unbounded queue: no cap
      },
      {
        family: 'micrometer-executor',
        name: 'executor render',
        kind: 'slots',
        role: 'threads',
        position: 0,
        at: second({ inUse: 8, capacity: 8, waiting: 30, acquired: 40, extra: { threads: 8 } }),
      },
      {
        family: 'micrometer-executor-queue',
        name: 'executor render queue',
        kind: 'queue',
        role: 'queue',
        position: 0,
        at: second({ inUse: 30, capacity: 100 }), // cap = queued + remaining
      },
    ],
  },
  {
    // Spring Boot 2 with server.tomcat.mbeanregistry.enabled: the connector's threads and its
    // request timer (150 requests in the second, 1.3 s each)
    what: 'Tomcat request threads',
    page: (k) => `# HELP tomcat_threads_busy_threads
# TYPE tomcat_threads_busy_threads gauge
tomcat_threads_busy_threads{name="http-nio-8080",} 200.0
# HELP tomcat_threads_config_max_threads
# TYPE tomcat_threads_config_max_threads gauge
tomcat_threads_config_max_threads{name="http-nio-8080",} 200.0
# HELP tomcat_threads_current_threads
# TYPE tomcat_threads_current_threads gauge
tomcat_threads_current_threads{name="http-nio-8080",} 200.0
# HELP tomcat_global_request_seconds
# TYPE tomcat_global_request_seconds summary
tomcat_global_request_seconds_count{name="http-nio-8080",} ${40000 + 150 * k}
tomcat_global_request_seconds_sum{name="http-nio-8080",} ${3200 + 195 * k}
# HELP tomcat_global_request_max_seconds
# TYPE tomcat_global_request_max_seconds gauge
tomcat_global_request_max_seconds{name="http-nio-8080",} 2.5
`,
    expected: [
      {
        family: 'tomcat',
        name: 'tomcat threads http-nio-8080',
        kind: 'slots',
        role: 'threads',
        position: 0,
        at: second({ inUse: 200, capacity: 200, holdMs: 1300, acquired: 150, extra: { threads: 200 } }),
      },
    ],
  },
  {
    // Micrometer's Jetty thread pool binder: no base unit, no tags
    what: 'Jetty request threads',
    page: () => `# HELP jetty_threads_busy The number of busy threads in the pool
# TYPE jetty_threads_busy gauge
jetty_threads_busy 198.0
# HELP jetty_threads_config_max The maximum number of threads in the pool
# TYPE jetty_threads_config_max gauge
jetty_threads_config_max 200.0
# HELP jetty_threads_config_min The minimum number of threads in the pool
# TYPE jetty_threads_config_min gauge
jetty_threads_config_min 8.0
# HELP jetty_threads_current The total number of threads in the pool
# TYPE jetty_threads_current gauge
jetty_threads_current 200.0
# HELP jetty_threads_jobs Number of jobs queued waiting for a thread
# TYPE jetty_threads_jobs gauge
jetty_threads_jobs 14.0
`,
    expected: [
      {
        family: 'jetty',
        name: 'jetty threads',
        kind: 'slots',
        role: 'threads',
        position: 0,
        at: second({ inUse: 198, capacity: 200, waiting: 14, extra: { threads: 200 } }),
      },
    ],
  },
  {
    // client_golang's DBStatsCollector: 25 waits in the second, 2 s of waiting between them
    what: 'Go database/sql',
    page: (k) => `# HELP go_sql_idle_connections The number of idle connections.
# TYPE go_sql_idle_connections gauge
go_sql_idle_connections{db_name="orders"} 0
# HELP go_sql_in_use_connections The number of connections currently in use.
# TYPE go_sql_in_use_connections gauge
go_sql_in_use_connections{db_name="orders"} 10
# HELP go_sql_max_idle_closed_total The total number of connections closed due to SetMaxIdleConns.
# TYPE go_sql_max_idle_closed_total counter
go_sql_max_idle_closed_total{db_name="orders"} 0
# HELP go_sql_max_open_connections Maximum number of open connections to the database.
# TYPE go_sql_max_open_connections gauge
go_sql_max_open_connections{db_name="orders"} 10
# HELP go_sql_open_connections The number of established connections both in use and idle.
# TYPE go_sql_open_connections gauge
go_sql_open_connections{db_name="orders"} 10
# HELP go_sql_wait_count_total The total number of connections waited for.
# TYPE go_sql_wait_count_total counter
go_sql_wait_count_total{db_name="orders"} ${300 + 25 * k}
# HELP go_sql_wait_duration_seconds_total The total time blocked waiting for a new connection.
# TYPE go_sql_wait_duration_seconds_total counter
go_sql_wait_duration_seconds_total{db_name="orders"} ${45.5 + 2 * k}
`,
    expected: [
      {
        family: 'go-sql',
        name: 'go database/sql pool orders',
        kind: 'slots',
        role: 'pool',
        position: 1,
        // waiting is not published: null, not 0
        at: second({ inUse: 10, capacity: 10, waitMs: 80, extra: { open: 10, idle: 0 } }),
      },
    ],
  },
  {
    // Debian's prometheus-pgbouncer-exporter (all gauges, SHOW POOLS/DATABASES/LISTS)
    what: "pgbouncer through Debian's exporter",
    page: () => `# HELP pgbouncer_active_clients Client connections that are linked to server connection and can process queries (cl_active)
# TYPE pgbouncer_active_clients gauge
pgbouncer_active_clients{database="app",user="app"} 20.0
# HELP pgbouncer_waiting_clients Client connections have sent queries but have not yet got a server connection (cl_waiting)
# TYPE pgbouncer_waiting_clients gauge
pgbouncer_waiting_clients{database="app",user="app"} 16.0
pgbouncer_waiting_clients{database="pgbouncer",user="pgbouncer"} 0.0
# HELP pgbouncer_pool_size  (pool_size)
# TYPE pgbouncer_pool_size gauge
pgbouncer_pool_size{database="app"} 4.0
pgbouncer_pool_size{database="pgbouncer"} 2.0
# HELP pgbouncer_reserve_pool  (reserve_pool)
# TYPE pgbouncer_reserve_pool gauge
pgbouncer_reserve_pool{database="app"} 0.0
pgbouncer_reserve_pool{database="pgbouncer"} 0.0
# HELP pgbouncer_used_servers Number of used servers (used_servers)
# TYPE pgbouncer_used_servers gauge
pgbouncer_used_servers 5.0
`,
    expected: [
      {
        family: 'pgbouncer',
        name: 'pgbouncer pool app/app',
        kind: 'slots',
        role: 'pool',
        position: 2,
        // no sv_active: in use unknown; the pool size is per database, shared by its users
        at: second({ capacity: 4, waiting: 16, extra: { 'clients active': 20, 'reserve pool': 0 } }),
      },
      {
        family: 'pgbouncer',
        name: 'pgbouncer pool pgbouncer/pgbouncer',
        kind: 'slots',
        role: 'pool',
        position: 2,
        at: second({ capacity: 2, waiting: 0, extra: { 'reserve pool': 0 } }),
      },
    ],
  },
  {
    // prometheus-community/pgbouncer_exporter: the pool size is under the database's `name`
    // (its `database` label is the server's database); stats per database
    what: "pgbouncer through the community's exporter",
    page: (
      k,
    ) => `# HELP pgbouncer_pools_server_active_connections Server connections linked to a client connection, shown as connection
# TYPE pgbouncer_pools_server_active_connections gauge
pgbouncer_pools_server_active_connections{database="app",user="app"} 4
# HELP pgbouncer_pools_client_waiting_connections Client connections waiting on a server connection, shown as connection
# TYPE pgbouncer_pools_client_waiting_connections gauge
pgbouncer_pools_client_waiting_connections{database="app",user="app"} 16
# HELP pgbouncer_pools_client_active_connections Client connections linked to server connection and able to process queries, shown as connection
# TYPE pgbouncer_pools_client_active_connections gauge
pgbouncer_pools_client_active_connections{database="app",user="app"} 4
# HELP pgbouncer_databases_pool_size Maximum number of server connections
# TYPE pgbouncer_databases_pool_size gauge
pgbouncer_databases_pool_size{database="appdb",force_user="",host="127.0.0.1",name="app",pool_mode="transaction",port="5432"} 4
# HELP pgbouncer_stats_client_wait_seconds_total Time spent by clients waiting for a server in seconds
# TYPE pgbouncer_stats_client_wait_seconds_total counter
pgbouncer_stats_client_wait_seconds_total{database="app"} ${12 + 1.5 * k}
# HELP pgbouncer_stats_sql_transactions_pooled_total Total number of SQL transactions pooled
# TYPE pgbouncer_stats_sql_transactions_pooled_total counter
pgbouncer_stats_sql_transactions_pooled_total{database="app"} ${5000 + 75 * k}
`,
    expected: [
      {
        family: 'pgbouncer-exporter',
        name: 'pgbouncer pool app/app',
        kind: 'slots',
        role: 'pool',
        position: 2,
        at: second({ inUse: 4, capacity: 4, waiting: 16, waitMs: 20, acquired: 75 }),
      },
    ],
  },
  {
    // plateau's own reference service (prom-client): 5 requests found the pool and its queue full
    what: 'node-postgres in the reference service',
    page: (k) => `# HELP db_pool_connections_max Connections the pool may hold (its configured max).
# TYPE db_pool_connections_max gauge
db_pool_connections_max 4
# HELP db_pool_connections_total Connections the pool holds (idle and in use).
# TYPE db_pool_connections_total gauge
db_pool_connections_total 4
# HELP db_pool_connections_in_use Connections checked out of the pool.
# TYPE db_pool_connections_in_use gauge
db_pool_connections_in_use 4
# HELP db_pool_waiting_requests Requests waiting for a pool connection.
# TYPE db_pool_waiting_requests gauge
db_pool_waiting_requests 7
# HELP db_pool_saturated_total Requests that found the pool at max and its wait queue full.
# TYPE db_pool_saturated_total counter
db_pool_saturated_total ${10 + 5 * k}
`,
    expected: [
      {
        family: 'node-postgres',
        name: 'node-postgres pool',
        kind: 'slots',
        role: 'pool',
        position: 1,
        at: second({ inUse: 4, capacity: 4, waiting: 7, refused: 5, extra: { open: 4 } }),
      },
    ],
  },
  {
    // prom-client's default metrics: 0.85 CPU seconds in the second, cores not published
    what: 'process CPU from process_cpu_seconds_total',
    page: (k) => `# HELP process_cpu_user_seconds_total Total user CPU time spent in seconds.
# TYPE process_cpu_user_seconds_total counter
process_cpu_user_seconds_total 10.1
# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total ${12.4 + 0.85 * k}
`,
    expected: [
      {
        family: 'process-cpu',
        name: 'process cpu',
        kind: 'cpu',
        role: 'cpu',
        position: 0,
        at: second({ inUse: 0.85 }),
      },
    ],
  },
  {
    // Spring Boot 3.2 (Micrometer 1.12): CPU time in ns is preferred to the usage gauge
    what: "process CPU from Micrometer's CPU time",
    page: (k) => `# HELP process_cpu_usage The "recent cpu usage" for the Java Virtual Machine process
# TYPE process_cpu_usage gauge
process_cpu_usage 0.3
# HELP process_cpu_time_ns_total The "cpu time" used by the Java Virtual Machine process
# TYPE process_cpu_time_ns_total counter
process_cpu_time_ns_total ${8.1e10 + 1.8e9 * k}
# HELP system_cpu_count The number of processors available to the Java virtual machine
# TYPE system_cpu_count gauge
system_cpu_count 4.0
`,
    expected: [
      {
        family: 'process-cpu',
        name: 'process cpu',
        kind: 'cpu',
        role: 'cpu',
        position: 0,
        at: second({ inUse: 1.8, capacity: 4 }),
      },
    ],
  },
  {
    // Spring Boot 2: only the usage gauge, a share of all cores
    what: "process CPU from Micrometer's usage gauge",
    page: () => `# HELP process_cpu_usage The "recent cpu usage" for the Java Virtual Machine process
# TYPE process_cpu_usage gauge
process_cpu_usage 0.45
# HELP system_cpu_count The number of processors available to the Java virtual machine
# TYPE system_cpu_count gauge
system_cpu_count 4.0
`,
    expected: [
      {
        family: 'process-cpu',
        name: 'process cpu',
        kind: 'cpu',
        role: 'cpu',
        position: 0,
        at: second({ inUse: 1.8, capacity: 4 }),
      },
    ],
  },
  {
    // the seed's bus executor, full with 240 messages queued
    what: 'the evento bus executor',
    page: () => `evento_server_bus_executor_pool_size 16
evento_server_bus_executor_max 16
evento_server_bus_executor_active 16
evento_server_bus_executor_queue_depth 240
evento_server_bus_executor_saturated 1
`,
    expected: [
      {
        family: 'evento-bus-executor',
        name: 'evento bus executor',
        kind: 'slots',
        role: 'threads',
        position: 1,
        at: second({ inUse: 16, capacity: 16, waiting: 240, extra: { threads: 16, saturated: 1 } }),
      },
    ],
  },
  {
    // plateau's PostgreSQL source: 4 backends waiting on contention (LWLock 3, Lock 1); the 2
    // waiting on their client are not contention
    what: 'PostgreSQL from plateau’s own source',
    page: (k) => `plateau_pg_backends{state="active"} 10
plateau_pg_backends{state="idle"} 2
plateau_pg_backends{state="idle in transaction"} 0
plateau_pg_backends_waiting{wait_event_type="LWLock"} 3
plateau_pg_backends_waiting{wait_event_type="Lock"} 1
plateau_pg_backends_waiting{wait_event_type="IO"} 0
plateau_pg_backends_waiting{wait_event_type="Client"} 2
plateau_pg_connections_in_use 12
plateau_pg_connections_max 97
plateau_pg_cpu_seconds_total ${300 + 1.6 * k}
plateau_pg_host_cpu_count 2
`,
    expected: [
      {
        family: 'postgres-cpu',
        name: 'postgres cpu',
        kind: 'cpu',
        role: 'cpu',
        position: 3,
        at: second({ inUse: 1.6, capacity: 2 }),
      },
      {
        family: 'postgres',
        name: 'postgres slots',
        kind: 'slots',
        role: 'database',
        position: 3,
        at: second({
          inUse: 12,
          capacity: 97,
          waiting: 4,
          extra: {
            'waiting LWLock': 3,
            'waiting Lock': 1,
            'waiting IO': 0,
            'waiting Client': 2,
            'backends active': 10,
            'backends idle': 2,
            'backends idle in transaction': 0,
          },
        }),
      },
    ],
  },
];

test('each family is recognised in a realistic exposition, with its figures a second later', () => {
  for (const { what, page, expected } of CASES) {
    const { resources } = resourcesFromScrapes(twoScrapes(page), []);
    assert.deepEqual(
      resources.map((r) => ({
        family: r.family,
        name: r.name,
        kind: r.kind,
        role: r.role,
        position: r.position,
        at: r.seconds.find((s) => s.t === T0 + 1),
      })),
      expected,
      what,
    );
  }
});

test('the registry: unique families, each recognised by a meter it reads, with a figure to judge it by', () => {
  const names = METER_FAMILIES.map((f) => f.family);
  assert.equal(new Set(names).size, names.length, 'family names are unique');
  for (const family of METER_FAMILIES) {
    const recognising = recognisingNames(family);
    assert.ok(recognising.length > 0, `${family.family} is recognised by some meter`);
    const read = familyMeterNames(family);
    for (const name of recognising) assert.ok(read.has(name), `${family.family} reads ${name}`);
    assert.ok(family.inUse || family.waiting, `${family.family} gives in use or waiting`);
    for (const name of read) assert.match(name, /^[a-zA-Z_:][a-zA-Z0-9_:]*$/, `${name} is a metric name`);
    const labels = Object.fromEntries(family.identity.map((l) => [l, 'x']));
    assert.ok(family.name(labels).length > 0);
  }
});
