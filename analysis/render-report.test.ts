// report.html rendered without a browser: self-contained, escaped, the verdict's marks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AnalysisResult, SaturationRow, ServerStepReport } from '../contract/index.ts';
import { loadReportAssets } from './analyze-run.ts';
import { compareRuns } from './compare.ts';
import { renderReport, scriptJson } from './render-report.ts';
import { buildRunSeries, plannedRate } from './report-series.ts';
import { evidenceColumn, reportTable } from './report-table.ts';
import { decideVerdict } from './verdict.ts';

const assets = await loadReportAssets();

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
