// The report's published-resource charts as data: a hand-built JVM run's meters, no load.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServerStepReport } from '../contract/index.ts';
import { JVM_SOURCE, JVM_T0, jvmAnalysis, jvmResourcesReport, servedAt } from '../test/fixtures/jvm-run.ts';
import {
  buildRunSeries,
  pageCharts,
  REPORT_CHARTS,
  type RunSeries,
  resourceCharts,
  type SeriesSources,
} from './report-series.ts';
import type { ClientSecond } from './second-series.ts';

const resourcesReport = jvmResourcesReport;
const analysisOf = jvmAnalysis;

/** The client's seconds of the load: 20 s from JVM_T0. */
const clientSeconds: ClientSecond[] = Array.from({ length: 20 }, (_, i) => {
  const rate = [20, 40, 60, 80][Math.floor(i / 5)]!;
  const { ok, refused } = servedAt(rate);
  return {
    t: JVM_T0 + i,
    sent: rate,
    served: ok,
    answered: rate,
    shed: refused,
    expired: 0,
    p50Ms: 70,
    p95Ms: 70,
    p99Ms: 70,
    dropped: 0,
    lagMs: 1,
    cpuPct: 10,
    vus: 5,
  };
});

const seriesOf = (sources: Partial<SeriesSources>, label = ''): RunSeries => {
  const resources = sources.resources;
  const analysis = resources ? analysisOf(resources) : analysisOf(resourcesReport());
  return buildRunSeries(
    analysis,
    undefined,
    { clientSeconds, server: undefined, generator: undefined, ...sources },
    label,
  );
};

test("the fixture's verdict names the pool, so the charts below have a first limit to lead with", () => {
  const analysis = analysisOf(resourcesReport());
  assert.equal(analysis.verdict.firstLimit.name, 'hikaricp pool orders');
});

test("a resource's line holds its seconds on the run's axis only, and only the figures its meters give", () => {
  const series = seriesOf({ resources: resourcesReport() });
  const lines = new Map(series.resources!.map((line) => [line.name, line]));
  assert.deepEqual([...lines.keys()].sort(), ['executor http', 'hikaricp pool orders', 'process cpu']);
  const pool = lines.get('hikaricp pool orders')!;
  // The meters were read from 3 s before the load to 3 s after it; the axis is the client's 20 s.
  assert.deepEqual(
    pool.x,
    Array.from({ length: 20 }, (_, i) => i),
  );
  assert.deepEqual(Object.keys(pool.values).sort(), ['capacity', 'inUse', 'waitMs', 'waiting']);
  assert.equal(pool.firstLimit, true);
  assert.equal(pool.source, JVM_SOURCE);
  // 20/s held 62.5 ms each: 1.25 in use; at 80/s all 4, with 12 waiting 212.5 ms on average.
  assert.deepEqual([pool.values.inUse![0], pool.values.inUse![19]], [1.25, 4]);
  assert.deepEqual([pool.values.waiting![0], pool.values.waiting![19]], [0, 12]);
  assert.deepEqual(pool.values.capacity!.slice(0, 3), [4, 4, 4]);
  assert.equal(pool.values.waitMs![19], 212.5);
  // CPU gives cores busy of cores: no waiting, no wait time.
  const cpu = lines.get('process cpu')!;
  assert.deepEqual(Object.keys(cpu.values).sort(), ['capacity', 'inUse']);
  assert.equal(cpu.values.capacity![0], 2);
  assert.equal(cpu.firstLimit, false);
});

test('a run without resources.json has no resource lines at all (its page data is as it was)', () => {
  const series = buildRunSeries(analysisOf(resourcesReport()), undefined, {
    clientSeconds,
    server: undefined,
    generator: undefined,
  });
  assert.equal('resources' in series, false);
  const empty = { ...resourcesReport(), resources: [] };
  assert.equal('resources' in seriesOf({ resources: empty }), false);
  assert.deepEqual(pageCharts([series]), { charts: REPORT_CHARTS, resources: [] });
});

test("one chart per resource, the first limit's first and marked; slots, CPU each drawn in their own terms", () => {
  const series = seriesOf({ resources: resourcesReport() });
  const charts = resourceCharts([series]);
  assert.deepEqual(
    charts.map((c) => [c.id, c.title, c.firstLimit === true]),
    [
      ['resource-0', 'hikaricp pool orders', true],
      ['resource-1', 'executor http', false],
      ['resource-2', 'process cpu', false],
    ],
  );
  const [pool, threads, cpu] = charts;
  assert.deepEqual(
    pool!.series.map((s) => [s.key, s.label, s.scale ?? 'y', s.limit === true]),
    [
      ['inUse', 'in use', 'y', false],
      ['capacity', 'capacity', 'y', true], // the flat dashed line
      ['waiting', 'waiting', 'y', false],
      ['waitMs', 'wait ms', 'y2', false], // its own wait time, on the right-hand axis
    ],
  );
  assert.equal(pool!.yLabel, 'connections, callers');
  assert.equal(pool!.y2Label, 'ms');
  const poolId = series.resources!.find((line) => line.name === 'hikaricp pool orders')!.id;
  assert.ok(
    pool!.series.every((s) => s.resource === poolId),
    'each line reads the pool by its id',
  );
  assert.equal(threads!.yLabel, 'threads, callers');
  assert.equal(threads!.y2Label, undefined, 'the executor gives no wait time');
  assert.deepEqual(
    cpu!.series.map((s) => [s.key, s.label]),
    [
      ['inUse', 'cores busy'],
      ['capacity', 'cores'],
    ],
  );
  assert.equal(cpu!.yLabel, 'cores');
  assert.match(
    pool!.caption,
    /waits\. Read from metrics http:\/\/127\.0\.0\.1:8080\/actuator\/prometheus \(hikaricp meters\)\.$/,
  );
});

test("a comparison's runs share a resource's chart by its id; the first limit is the last run's", () => {
  const b = seriesOf({ resources: resourcesReport() }, 'B');
  const a = { ...b, label: 'A', resources: b.resources!.map((line) => ({ ...line, firstLimit: false })) };
  // A names no first limit, B names the pool: the pool leads, once.
  const charts = resourceCharts([a, b]);
  assert.deepEqual(
    charts.map((c) => c.title),
    ['hikaricp pool orders', 'executor http', 'process cpu'],
  );
  assert.equal(charts[0]!.firstLimit, true);
  const onlyA = resourceCharts([b, { ...a, resources: a.resources.slice(0, 1) }]);
  assert.equal(onlyA.filter((c) => c.firstLimit).length, 0, "B's run (last) names none of its own");
});

test("plateau's own GET /steps charts give way to the resources for a service without GET /steps, and stay beside them with it", () => {
  const withoutSteps = pageCharts([seriesOf({ resources: resourcesReport() })]);
  assert.deepEqual(
    withoutSteps.charts.map((c) => c.id),
    ['throughput', 'latency', 'generator'],
  );
  assert.equal(withoutSteps.resources.length, 3);
  const server: ServerStepReport = {
    kind: 'plateau.server-steps',
    schemaVersion: 2,
    service: 'statement-api',
    settings: { poolMax: 4, queueMax: 8, acquireTimeoutMs: 200, shed: true, extra: {} },
    startedMs: 0,
    generatedMs: 0,
    steps: [],
    timeline: [JVM_T0, JVM_T0 + 1].map((t) => ({
      t,
      step: 'r020',
      served: 20,
      shed: 0,
      checkedOutMean: 1,
      waitingMean: 0,
      waitingMax: 0,
      cpuPct: 25,
    })),
  };
  const withSteps = pageCharts([seriesOf({ resources: resourcesReport(), server })]);
  assert.deepEqual(
    withSteps.charts.map((c) => c.id),
    REPORT_CHARTS.map((c) => c.id),
  );
});
