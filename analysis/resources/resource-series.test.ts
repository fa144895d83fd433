import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DeclaredResource, MeterSample, MeterScrape, ResourceSeries } from '../../contract/index.ts';
import { declaredMeterName } from './declared-resources.ts';
import { meterNamesRead, resourcesFromScrapes, unrecognisedNames } from './resource-series.ts';

const SOURCE = 'metrics http://127.0.0.1:8080/actuator/prometheus';

function scrape(atS: number, samples: MeterSample[], source = SOURCE): MeterScrape {
  return { kind: 'plateau.meter-scrape', source, atMs: Math.round(atS * 1000), samples };
}

/** `name{labels} value` in short. */
function s(name: string, value: number, labels: Record<string, string> = {}): MeterSample {
  return { name, labels, value };
}

const pool = (labels: Record<string, string>, active: number, timeouts: number): MeterSample[] => [
  s('hikaricp_connections_active', active, labels),
  s('hikaricp_connections_max', 4, labels),
  s('hikaricp_connections_timeout_total', timeouts, labels),
];

function only(resources: ResourceSeries[]): ResourceSeries {
  assert.equal(resources.length, 1, resources.map((r) => r.id).join(', '));
  return resources[0]!;
}

test('gauges are the mean of the readings in a second; a second without one is absent', () => {
  const { resources } = resourcesFromScrapes(
    [
      scrape(100.1, pool({ pool: 'a' }, 2, 0)),
      scrape(100.6, pool({ pool: 'a' }, 4, 0)), // same second: (2 + 4) / 2
      // no scrape in second 101 (the endpoint was slow): not carried forward
      scrape(102.3, pool({ pool: 'a' }, 3, 0)),
    ],
    [],
  );
  assert.deepEqual(
    only(resources).seconds.map((x) => [x.t, x.inUse, x.capacity]),
    [
      [100, 3, 4],
      [102, 3, 4],
    ],
  );
});

test('counters are the increase since the previous reading per second; a decrease is a restart', () => {
  const { resources, notes } = resourcesFromScrapes(
    [
      scrape(100, pool({ pool: 'a' }, 4, 10)), // first reading: no increase yet
      scrape(101, pool({ pool: 'a' }, 4, 13)), // +3 in 1 s
      scrape(103, pool({ pool: 'a' }, 4, 17)), // +4 in 2 s: 2 a second, in the second of the reading
      scrape(104, pool({ pool: 'a' }, 4, 2)), // went down: restarted, 2 since
      scrape(105, pool({ pool: 'a' }, 4, 3)), // +1
      scrape(106, pool({ pool: 'a' }, 4, 0)), // restarted again: still one note
    ],
    [],
  );
  assert.deepEqual(
    only(resources).seconds.map((x) => [x.t, x.refused]),
    [
      [100, null],
      [101, 3],
      [103, 2],
      [104, 2],
      [105, 1],
      [106, 0],
    ],
  );
  assert.deepEqual(notes, [
    'hikaricp pool a: a counter went down at 1970-01-01T00:01:44.000Z (the service restarted?); counted from its new value',
  ]);
});

test('a summary mean needs acquisitions in the second; without them the wait is unknown, not 0', () => {
  const timer = (count: number, sum: number) => [
    s('hikaricp_connections_active', 1, { pool: 'a' }),
    s('hikaricp_connections_acquire_seconds_count', count, { pool: 'a' }),
    s('hikaricp_connections_acquire_seconds_sum', sum, { pool: 'a' }),
  ];
  const { resources } = resourcesFromScrapes(
    [
      scrape(100, timer(10, 1)),
      scrape(101, timer(20, 1.5)), // 10 acquisitions, 0.5 s: 50 ms each
      scrape(102, timer(20, 1.5)), // none: no mean
      scrape(103, timer(21, 1.502)), // one, 2 ms
    ],
    [],
  );
  assert.deepEqual(
    only(resources).seconds.map((x) => [x.t, x.waitMs, x.acquired]),
    [
      [100, null, null],
      [101, 50, 10],
      [102, null, 0],
      [103, 2, 1],
    ],
  );
});

test('labels, an instance and the source make separate resources', () => {
  const { resources } = resourcesFromScrapes(
    [
      scrape(100, [...pool({ pool: 'orders' }, 1, 0), ...pool({ pool: 'billing' }, 2, 0)]),
      // the same pool name on another replica, scraped directly
      scrape(100, pool({ pool: 'orders' }, 3, 0), 'metrics http://127.0.0.2:8080/actuator/prometheus'),
      // and through a Prometheus server, where series carry their instance
      scrape(
        100,
        [
          ...pool({ pool: 'orders', instance: 'a:8080', job: 'orders' }, 4, 0),
          ...pool({ pool: 'orders', instance: 'b:8080', job: 'orders' }, 2, 0),
        ],
        'prometheus http://127.0.0.1:9090',
      ),
    ],
    [],
  );
  assert.deepEqual(
    resources.map((r) => [r.id, r.name, r.seconds[0]!.inUse]),
    [
      [`hikaricp{pool="billing"}@${SOURCE}`, 'hikaricp pool billing', 2],
      [`hikaricp{pool="orders"}@${SOURCE}`, 'hikaricp pool orders [127.0.0.1:8080]', 1],
      [
        'hikaricp{pool="orders"}@metrics http://127.0.0.2:8080/actuator/prometheus',
        'hikaricp pool orders [127.0.0.2:8080]',
        3,
      ],
      [
        'hikaricp{pool="orders",instance="a:8080"}@prometheus http://127.0.0.1:9090',
        'hikaricp pool orders [a:8080]',
        4,
      ],
      [
        'hikaricp{pool="orders",instance="b:8080"}@prometheus http://127.0.0.1:9090',
        'hikaricp pool orders [b:8080]',
        2,
      ],
    ],
  );
});

test('past the cap, the resources of a family are dropped with a note; other families are kept', () => {
  const executors = (n: number) =>
    Array.from({ length: n }, (_, i) => s('executor_active_threads', 1, { name: `tenant-${i}` }));
  const { resources, notes } = resourcesFromScrapes(
    [
      scrape(100, [...executors(5), ...pool({ pool: 'a' }, 1, 0)]),
      scrape(101, [...executors(7), ...pool({ pool: 'a' }, 1, 0)]), // two more label sets appear later
    ],
    [],
    { seriesCap: 3 },
  );
  assert.deepEqual(
    resources.map((r) => r.name),
    ['executor tenant-0', 'executor tenant-1', 'executor tenant-2', 'hikaricp pool a'],
  );
  assert.deepEqual(notes, [
    `${SOURCE}: 7 micrometer-executor resources (one per label set), more than the cap of 3; the first 3 seen are followed, the other 4 dropped`,
  ]);
});

test('a family that cannot say something notes it once', () => {
  const go = (t: number) =>
    scrape(t, [
      s('go_sql_in_use_connections', 2, { db_name: 'a' }),
      s('go_sql_in_use_connections', 3, { db_name: 'b' }),
    ]);
  const { resources, notes } = resourcesFromScrapes([go(100), go(101)], []);
  assert.equal(resources.length, 2);
  assert.equal(notes.length, 1);
  assert.match(
    notes[0]!,
    /^go-sql: database\/sql's stats count waits but publish no gauge of callers waiting/,
  );
});

test('declared resources: selectors summed over the series they match, PromQL read from its result, missing series noted', () => {
  const declared: DeclaredResource[] = [
    {
      name: 'render workers',
      kind: 'slots',
      inUse: 'worker_busy{pool="render"}',
      max: 'worker_max{pool="render"}',
      waiting: 'sum(rate(render_waits[30s]))', // PromQL: the Prometheus source writes its result
      role: 'threads',
      position: 0,
    },
    { name: 'ingest queue', kind: 'queue', depth: 'ingest_depth', cap: 'ingest_cap' }, // never appears
    // the name is there, but not for this pool: no series, not 0
    { name: 'mail workers', kind: 'slots', inUse: 'worker_busy{pool="mail"}' },
    { name: 'worker cpu', kind: 'cpu', inUse: 'worker_cpu_seconds_total', max: 'worker_cores' }, // a counter
  ];
  const at = (t: number, cpuSeconds: number) =>
    scrape(t, [
      s('worker_busy', 3, { pool: 'render', shard: '1' }),
      s('worker_busy', 2, { pool: 'render', shard: '2' }), // both shards: summed
      s('worker_busy', 9, { pool: 'other' }), // not matched
      s('worker_max', 8, { pool: 'render' }),
      s(declaredMeterName('render workers', 'waiting'), 1.5),
      s('worker_cpu_seconds_total', cpuSeconds),
      s('worker_cores', 2),
      s('jvm_memory_used_bytes', 1e8, { area: 'heap' }),
    ]);
  const { resources, notes, unrecognised } = resourcesFromScrapes([at(100, 10), at(101, 11.25)], declared);
  assert.deepEqual(
    resources.map((r) => [r.id, r.name, r.family, r.kind, r.role, r.position, r.onFull]),
    [
      [
        `declared{name="render workers"}@${SOURCE}`,
        'render workers',
        'declared',
        'slots',
        'threads',
        0,
        'unknown',
      ],
      [`declared{name="worker cpu"}@${SOURCE}`, 'worker cpu', 'declared', 'cpu', 'cpu', 1, 'unknown'],
    ],
  );
  assert.deepEqual(
    resources[0]!.seconds.map((x) => [x.t, x.inUse, x.capacity, x.waiting]),
    [
      [100, 5, 8, 1.5],
      [101, 5, 8, 1.5],
    ],
  );
  assert.deepEqual(
    resources[1]!.seconds.map((x) => [x.t, x.inUse, x.capacity]),
    [
      [100, null, 2],
      [101, 1.25, 2], // 1.25 CPU seconds in a second: 1.25 cores busy
    ],
  );
  assert.deepEqual(notes, [
    'declared resource "ingest queue": its series depth (ingest_depth) never appeared in any source',
    'declared resource "ingest queue": its series cap (ingest_cap) never appeared in any source',
    'declared resource "mail workers": its series inUse (worker_busy{pool="mail"}) never appeared in any source',
  ]);
  assert.deepEqual(unrecognised, new Map([[SOURCE, ['jvm_memory_used_bytes']]]));
});

test('the names read are every family meter and every declared series; the rest are listed as unrecognised', () => {
  const read = meterNamesRead([
    { name: 'q', kind: 'queue', depth: 'q_depth{x="1"}', cap: 'max_over_time(q_cap[1m])' },
  ]);
  for (const name of [
    'hikaricp_connections_active',
    'hikaricp_connections_acquire_seconds_sum',
    'hikaricp_connections_acquire_seconds_count',
    'executor_queue_remaining_tasks',
    'plateau_pg_backends_waiting',
    'q_depth',
    'plateau_declared:q:cap',
  ])
    assert.ok(read.has(name), name);
  assert.ok(!read.has('jvm_memory_used_bytes'));
  assert.deepEqual(unrecognisedNames(['b_total', 'hikaricp_connections_active', 'a', 'b_total'], read), [
    'a',
    'b_total',
  ]);
});

test('no scrapes: no resources, no notes', () => {
  assert.deepEqual(resourcesFromScrapes([], []), { resources: [], unrecognised: new Map(), notes: [] });
});
