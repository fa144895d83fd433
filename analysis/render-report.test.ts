// report.html rendered without a browser: self-contained, escaped, the verdict's marks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AnalysisResult, SaturationRow, ServerStepReport } from '../contract/index.ts';
import { jvmAnalysis, jvmResourcesReport } from '../test/fixtures/jvm-run.ts';
import { compareRuns } from './compare.ts';
import { recordFields, resourceWords } from './render.ts';
import { renderReport, scriptJson } from './render-report.ts';
import { buildRunSeries, plannedRate, REPORT_CHARTS } from './report-series.ts';
import { evidenceColumn, REPORT_COLUMNS, reportTable } from './report-table.ts';
import { loadReportAssets } from './templates.ts';
import { decideVerdict } from './verdict.ts';

const assets = await loadReportAssets();

/** What handlebars makes of a value in `{{value}}`. */
const escapeHtml = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#x27;')
    .replace(/`/g, '&#x60;')
    .replace(/=/g, '&#x3D;');

const row = (
  step: string,
  offered: number | null,
  served: number,
  pool: number,
  at: number,
): SaturationRow => ({
  step,
  offeredPerSec: offered,
  sentPerSec: offered ?? served,
  servedPerSec: served,
  servedSource: 'server',
  seconds: 5,
  requests: Math.round((offered ?? served) * 5),
  latencyMs: { med: 54, p95: pool > 90 ? 190 : 60, p99: 70, max: 80 },
  window: { startS: 1000 + at, endS: 1005 + at },
  failures: { shed: 0, rateLimited: 0, serverErrors: 0, clientErrors: 0, timeouts: 0, networkErrors: 0 },
  failureRate: 0,
  dropped: 0,
  generator: { lagMsMax: 1, cpuPctMax: 10 },
  server: {
    checkedOutPct: pool,
    eventLoopUtilization: 0.2,
    waitingMean: pool > 90 ? 7 : 0,
    waitingMax: pool > 90 ? 8 : 0,
    waitP95Ms: pool > 90 ? 120 : 0.2,
    queryP95Ms: 51,
    cpuPct: 30,
  },
  invalid: null,
});

function analysisOf(notes: string[] = []): AnalysisResult {
  const table = [row('r020', 20, 20, 30, 0), row('r060', 60, 59, 85, 5), row('r080', 80, 69.6, 100, 10)];
  const verdict = decideVerdict({
    rows: table,
    settings: { poolMax: 4, queueMax: 8, acquireTimeoutMs: 200, shed: true, extra: {} },
    timeline: [],
    objectives: { p95Ms: 250, failRate: 0.01 },
    database: null,
    recoveryRatePerSec: null,
  });
  verdict.notes.push(...notes);
  return {
    kind: 'plateau.analysis',
    schemaVersion: 2,
    runId: 'run-a',
    sources: { client: 'k6.csv.gz', server: 'server.json', manifest: null },
    objectives: { p95Ms: 250, failRate: 0.01 },
    table,
    verdict,
  };
}

const server = (expired: boolean): ServerStepReport => ({
  kind: 'plateau.server-steps',
  schemaVersion: 2,
  service: 'statement-api',
  settings: { poolMax: 4, queueMax: 8, acquireTimeoutMs: 200, shed: true, extra: {} },
  startedMs: 0,
  generatedMs: 0,
  steps: [],
  timeline: [1000, 1001, 1002].map((t) => ({
    t,
    step: 'r020',
    served: 20,
    shed: 0,
    ...(expired ? { expired: 2 } : {}),
    checkedOutMean: 1,
    waitingMean: 0,
    waitingMax: 0,
    cpuPct: 25,
  })),
});

const runOf = (analysis: AnalysisResult, label = '', expired = false) => ({
  analysis,
  manifest: undefined,
  series: buildRunSeries(
    analysis,
    undefined,
    { clientSeconds: [], server: server(expired), generator: undefined },
    label,
  ),
  recordText: 'first limit:   pool\n',
});

const page = (analysis: AnalysisResult) =>
  renderReport(assets, {
    runs: [runOf(analysis)],
    generatedAt: new Date('2026-12-01T10:00:00Z'),
    command: 'plateau report runs/run-a',
    plateauVersion: '0.1.0',
  });

test('the page is self-contained: the chart library inlined, nothing to fetch', () => {
  const html = page(analysisOf());
  assert.doesNotMatch(html, /(src|href)\s*=\s*["']?(https?:)?\/\//i);
  assert.doesNotMatch(html, /url\(\s*["']?(https?:)?\/\//i);
  assert.doesNotMatch(html, /<script[^>]+src=/i);
  assert.doesNotMatch(html, /<link[^>]+stylesheet/i);
  assert.ok(html.includes('uPlot'), 'uPlot inlined');
  assert.match(html, /@media \(prefers-color-scheme: dark\)/);
  assert.match(html, /@media print/);
});

test('text from the run cannot break out of the page: HTML escaped, JSON escaped inside its script', () => {
  const hostile = '</script><img src=http://example.invalid/x onerror=alert(1)><!--';
  const html = page(analysisOf([hostile]));
  assert.equal(html.includes('<img'), false, 'the note is escaped in the HTML');
  const json = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)![1]!;
  assert.equal(json.includes('<'), false, 'no < inside the JSON element');
  // Exactly the page's three scripts close: the data, uPlot, the drawing code.
  assert.equal(html.match(/<\/script/gi)!.length, 3);
  assert.deepEqual(JSON.parse(scriptJson({ note: hostile, line: '\u2028' })), {
    note: hostile,
    line: '\u2028',
  });
});

test("the table marks the verdict's saturated columns from the plateau's row on, and names the flat ones", () => {
  const analysis = analysisOf();
  assert.equal(analysis.verdict.firstLimit.resource, 'pool');
  const table = reportTable(analysis);
  const marked = table.rows.map((r) => [r.step, r.cells.filter((c) => c.saturated).map((c) => c.key)]);
  assert.deepEqual(marked, [
    ['r020', []],
    ['r060', []],
    ['r080', ['pool', 'waiting', 'waitP95']],
  ]);
  assert.deepEqual(
    table.columns.filter((c) => c.flat).map((c) => c.key),
    ['queryP95', 'cpu'],
  );
  const html = page(analysis);
  assert.match(html, /<tr data-step="r080" class="plateau">/);
  assert.match(html, /<td data-col="pool" class="sat">100<\/td>/);
});

test('evidence phrases name their columns', () => {
  const cases: [string, string | null][] = [
    ['pool 100% checked out of 4', 'pool'],
    ['waiting mean 7, max 8 (queue cap 8)', 'waiting'],
    ['wait p95 118.3 ms (0.2 ms at r020)', 'waitP95'], // not "waiting"
    ['database p95 50.2 ms (50.4 ms at r020)', 'dbP95'],
    ['query p95 51 ms (50 ms at r020)', 'queryP95'],
    ['CPU 48%, event loop 47% busy (17%, 16% at r020)', 'cpu'],
    ['the generator dropped 3 iterations', null], // an invalid row's reason: no column
  ];
  for (const [phrase, column] of cases) assert.equal(evidenceColumn(phrase), column, phrase);
});

test('the planned rate ramps into each step, then down to the recovery rate', () => {
  const load = {
    script: 'capacity',
    stepsPerSec: [20, 60],
    holdSeconds: 10,
    rampSeconds: 2,
    recoveryRatePerSec: 10,
    recoverySeconds: 5,
    jitterSeconds: 0,
    p95Ms: 250,
    failRate: 0.01,
  };
  const cases: [number, number | null][] = [
    [-1, null], // before the scenario
    [1, 10], // half way up the first ramp from 0
    [5, 20], // holding
    [11, 40], // half way from 20 to 60
    [15, 60],
    [20.5, 35], // half way down to the recovery rate
    [22, 10],
    [25, null], // after the recovery
  ];
  for (const [at, rate] of cases) assert.equal(plannedRate(load, at), rate, `at ${at} s`);
});

test("expired comes from the service's timeline when it counts 504s, and is an empty series until then", () => {
  const analysis = analysisOf();
  const without = runOf(analysis).series;
  assert.deepEqual(without.values.expired, [null, null, null]);
  assert.deepEqual(without.values.served, [20, 20, 20]);
  assert.deepEqual(without.values.poolMax, [4, 4, 4]);
  assert.deepEqual(runOf(analysis, '', true).series.values.expired, [2, 2, 2]);
  assert.deepEqual(
    without.bands.map((b) => [b.step, b.startS, b.endS, b.plateau]),
    [
      ['r020', 0, 5, false],
      ['r060', 5, 10, false],
      ['r080', 10, 15, true],
    ],
  );
});

test('a comparison page overlays A and B and says how far the plateau moved', () => {
  const a = analysisOf();
  const b = { ...analysisOf(), runId: 'run-b' };
  b.verdict = { ...b.verdict, plateau: { ...b.verdict.plateau!, servedPerSec: 139.2 } };
  const comparison = compareRuns({ analysis: a, manifest: undefined }, { analysis: b, manifest: undefined });
  const html = renderReport(assets, {
    runs: [runOf(a, 'A'), runOf(b, 'B')],
    comparison,
    generatedAt: new Date('2026-12-01T10:00:00Z'),
    command: 'plateau report runs/run-a runs/run-b',
    plateauVersion: '0.1.0',
  });
  assert.match(html, /<p class="moved" id="moved">moved the plateau 2×<\/p>/);
  assert.match(html, /Saturation table, run B \(run-b\)/);
  assert.match(html, /Saturation table, run A \(run-a\)/);
  const data = JSON.parse(/id="report-data">([\s\S]*?)<\/script>/.exec(html)![1]!) as {
    runs: { label: string }[];
  };
  assert.deepEqual(
    data.runs.map((r) => r.label),
    ['A', 'B'],
  );
});

test('a closed-model analysis shows its charts and record text, without a rate table', () => {
  const closed = { ...analysisOf(), model: 'closed' } as AnalysisResult;
  const html = page(closed);
  assert.match(html, /<pre class="record-text">first limit: {3}pool\n<\/pre>/);
  assert.doesNotMatch(html, /<table class="saturation"/);
});

test("a closed-model sweep's page has its levels as the table, the goodput peak's row marked", () => {
  const row = {
    step: 'c008',
    clients: 8,
    seconds: 10,
    attemptsPerSec: 36,
    goodputPerSec: 35.5,
    completedPerSec: 35.4,
    expired: 0,
    timeouts: 0,
    shed: 0,
    retries: 0,
    latencyMs: { med: 200, p95: 232.3, mean: 210 },
    okP95Ms: 232.3,
    inRequests: { measured: 7.8, predicted: 7.6 },
    server: { checkedOutPct: 100, waitingMean: 5.5, waitingMax: 6, cpuPct: 21 },
  };
  const sweep = {
    rows: [row, { ...row, step: 'c016', clients: 16, goodputPerSec: 0 }],
    verdict: {
      peak: { step: 'c008', clients: 8, goodputPerSec: 35.5, p95Ms: 232.3 },
      inversion: [],
      summary: '8 clients: 35.5/s within the deadline',
      limit: 'pool',
      pastPeak: '',
      littlesLaw: '',
      recovery: { clients: null, seconds: null, summary: '' },
    },
  };
  const closed = { ...analysisOf(), model: 'closed', sweep } as AnalysisResult;
  const html = page(closed);
  assert.match(html, /<h2>Levels of clients/);
  assert.match(html, /<th data-col="goodput"[^>]*>goodput\/s/);
  assert.match(html, /<tr data-step="c008" class="plateau"/);
  assert.match(html, /goodput peak 8 clients: 35.5\/s within the deadline/);
});

/** The hand-built JVM run (test/fixtures/jvm-run.ts): no GET /steps, its meters' resources. */
const jvmRun = () => {
  const resources = jvmResourcesReport();
  const analysis = jvmAnalysis(resources);
  return {
    analysis,
    manifest: undefined,
    series: buildRunSeries(analysis, undefined, {
      clientSeconds: [],
      server: undefined,
      generator: undefined,
      resources,
    }),
    recordText: '',
  };
};

const jvmPage = () =>
  renderReport(assets, {
    runs: [jvmRun()],
    generatedAt: new Date('2026-12-01T10:00:00Z'),
    command: 'plateau report runs/jvm-run',
    plateauVersion: '0.1.0',
  });

test("each published resource has a column, the first limit's first and marked from the plateau's row on", () => {
  const analysis = jvmAnalysis();
  assert.equal(analysis.verdict.firstLimit.name, 'hikaricp pool orders');
  const table = reportTable(analysis);
  // No GET /steps: plateau's own columns give way to the resources', as in the terminal table.
  assert.deepEqual(
    table.columns.map((c) => c.key),
    [
      ...REPORT_COLUMNS.map((c) => c.key).filter(
        (key) => !['pool', 'waiting', 'waitP95', 'queryP95', 'dbP95', 'loopDelay', 'cpu'].includes(key),
      ),
      'resource:hikaricp pool orders',
      'resource:executor http',
      'resource:process cpu',
    ],
  );
  const pool = table.columns.find((c) => c.key === 'resource:hikaricp pool orders')!;
  assert.deepEqual([pool.title, pool.saturated, pool.firstLimit], ['hikaricp pool orders', true, true]);
  assert.deepEqual(
    table.columns.filter((c) => c.flat).map((c) => c.key),
    ['resource:executor http', 'resource:process cpu'],
  );
  const marked = table.rows.map((r) => [r.step, r.cells.filter((c) => c.saturated).map((c) => c.key)]);
  assert.deepEqual(marked, [
    ['r020', []],
    ['r040', []],
    ['r060', []],
    ['r080', ['resource:hikaricp pool orders']],
  ]);
  // The cell says what table.md says.
  const plateauCell = table.rows[3]!.cells.find((c) => c.key === 'resource:hikaricp pool orders')!;
  assert.equal(
    plateauCell.text,
    resourceWords(analysis.table[3]!.resources!.find((f) => f.name === pool.title)!),
  );
  assert.match(plateauCell.text, /^4\/4 \(100%\), waiting 12\/12, wait 212\.5 ms/);
  const html = jvmPage();
  assert.match(
    html,
    /<th data-col="resource:hikaricp pool orders" class="sat">hikaricp pool orders<span class="tag">first limit<\/span><\/th>/,
  );
  assert.match(html, /<td data-col="resource:hikaricp pool orders" class="sat">4\/4 \(100%\)/);
});

test('evidence phrases of published resources name their columns, the longest name first', () => {
  const names = ['executor http', 'executor http queue', 'hikaricp pool orders', 'process cpu'];
  const cases: [string, string | null][] = [
    [
      'hikaricp pool orders 4 of 4 connections in use (100%), waiting mean 12',
      'resource:hikaricp pool orders',
    ],
    ['also full: executor http 16 of 16 threads in use (100%)', 'resource:executor http'],
    ['executor http queue depth mean 30, max 40 of 100', 'resource:executor http queue'], // not "executor http"
    ['process cpu 1.96 of 2 cores busy (98%)', 'resource:process cpu'],
    ['pool 100% checked out of 4', 'pool'], // plateau's own figures keep their columns
    ['CPU 48%, event loop 47% busy', 'cpu'],
  ];
  for (const [phrase, column] of cases) assert.equal(evidenceColumn(phrase, names), column, phrase);
});

test('the verdict block shows the predicted ceilings and the signal to scale on, as record.txt words them', () => {
  const analysis = jvmAnalysis();
  const fields = recordFields(analysis, undefined);
  assert.match(String(fields.predicted), /^hikaricp pool orders 64\/s, /);
  const html = jvmPage();
  const verdict = /<section class="verdict" id="verdict">([\s\S]*?)<\/section>/.exec(html)![1]!;
  assert.ok(
    verdict.includes(`<dt>predicted</dt><dd id="predicted">${escapeHtml(String(fields.predicted))}</dd>`),
    verdict,
  );
  assert.ok(
    verdict.includes(`<dt>scale on</dt><dd id="scale-on">${escapeHtml(String(fields.scaleOn))}</dd>`),
    verdict,
  );
  assert.match(
    verdict,
    /scale-on">hikaricp pool orders: its waiting callers and wait time \(not CPU\); a CPU-targeted autoscaler/,
  );
  // And in the record, in record.txt's order.
  const record = /<section class="record">([\s\S]*?)<\/section>/.exec(html)![1]!;
  const names = [...record.matchAll(/<dt>([^<]+)<\/dt>/g)].map((m) => m[1]);
  assert.deepEqual(names, [
    'service',
    'workload',
    'first limit',
    'predicted',
    'knee',
    'evidence',
    'confirmed by',
    'safe limit',
    'overload',
    'recovery',
    'database',
    'next limit',
    'scale on',
  ]);
});

test("the page draws a chart per resource, the first limit's first and marked, and carries only their seconds", () => {
  const html = jvmPage();
  const figures = [
    ...html.matchAll(/<figure id="figure-([^"]+)"( class="first-limit")?>\s*<h3>([^<]+)/g),
  ].map((m) => [m[1], m[3]!.trim(), m[2] !== undefined]);
  assert.deepEqual(figures, [
    ['throughput', 'Throughput', false],
    ['latency', 'Client latency', false],
    ['generator', 'Load generator health', false],
    ['resource-0', 'hikaricp pool orders', true],
    ['resource-1', 'executor http', false],
    ['resource-2', 'process cpu', false],
  ]);
  assert.match(html, /hikaricp pool orders <span class="limit-tag">first limit<\/span>/);
  const data = JSON.parse(/id="report-data">([\s\S]*?)<\/script>/.exec(html)![1]!) as {
    charts: { id: string }[];
    runs: { resources: { name: string; x: number[]; values: Record<string, unknown[]> }[] }[];
  };
  assert.deepEqual(
    data.charts.map((c) => c.id),
    ['throughput', 'latency', 'generator', 'resource-0', 'resource-1', 'resource-2'],
  );
  // A resource's seconds and its four figures at most: not resources.json's whole second.
  const pool = data.runs[0]!.resources.find((r) => r.name === 'hikaricp pool orders')!;
  assert.deepEqual(Object.keys(pool.values).sort(), ['capacity', 'inUse', 'waitMs', 'waiting']);
  assert.equal(pool.x.length, pool.values.inUse!.length);
  assert.equal(html.includes('"holdMs"'), false);
  assert.equal(html.includes('"extra"'), false);
});

test('a run without published resources renders as it did: the same charts, columns and data', () => {
  const analysis = analysisOf();
  const html = page(analysis);
  const data = JSON.parse(/id="report-data">([\s\S]*?)<\/script>/.exec(html)![1]!) as {
    charts: unknown[];
    runs: Record<string, unknown>[];
  };
  assert.deepEqual(data.charts, JSON.parse(JSON.stringify(REPORT_CHARTS)));
  assert.deepEqual(Object.keys(data.runs[0]!).sort(), ['bands', 'label', 'runId', 't0', 'values', 'x']);
  assert.deepEqual(
    reportTable(analysis).columns.map((c) => c.key),
    REPORT_COLUMNS.map((c) => c.key),
  );
  assert.doesNotMatch(html, /Resources the service publishes|first-limit"|data-col="resource:/);
});
