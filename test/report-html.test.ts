// report.html in a real browser: headless Chromium opens the report of a real small study.
// test-run: load
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { analyzePath } from '../analysis/analyze-run.ts';
import { writeReport } from '../analysis/write-report.ts';
import type { AnalysisResult, RunManifest } from '../contract/index.ts';
import { writeJvmRun } from './fixtures/jvm-run.ts';
import { plateau } from './helpers/cli.ts';
import { SMALL_STUDY } from './helpers/small-study.ts';

/** Debian's chromium (.ci/run installs it); CHROMIUM_BIN names another. */
const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const out = await mkdtemp(join(tmpdir(), 'plateau-report-html-'));
// The screenshots stay for a human to look at; the run directories go.
const shots = await mkdtemp(join(tmpdir(), 'plateau-report-png-'));
after(() => rm(out, { recursive: true, force: true }));

let browser: Browser | undefined;
after(() => browser?.close());

/** What a page did while it loaded: console errors, uncaught errors, requests off the disk. */
async function open(path: string, dark = false): Promise<{ page: Page; problems: string[] }> {
  browser ??= await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in a container has no user namespace for Chromium's sandbox.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    // Wait for Chromium's endpoint line (or its exit), not for a clock: on a CI machine whose
    // two cores the whole suite keeps busy, its start once took longer than puppeteer's 30 s.
    // The test runner's per-test timeout still bounds it.
    timeout: 0,
  });
  const page = await browser.newPage();
  // The same for every wait on the page: an event, bounded by the test's own timeout.
  page.setDefaultTimeout(0);
  await page.setViewport({ width: 1280, height: 900 });
  if (dark) await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${(error as Error).message}`));
  page.on('request', (request) => {
    if (!request.url().startsWith('file:')) problems.push(`network request: ${request.url()}`);
  });
  await page.goto(pathToFileURL(path).href, { waitUntil: 'load' });
  return { page, problems };
}

/** Each chart: its id, the points it was given, and how many colours its canvas holds. */
const CHARTS_DRAWN = `[...document.querySelectorAll('.chart')].map((el) => {
  const canvas = el.querySelector('canvas');
  const colours = new Set();
  if (canvas) {
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (let i = 0; i < pixels.length; i += 4 * 7) colours.add(pixels.slice(i, i + 4).join(','));
  }
  return { id: el.dataset.chart, points: Number(el.dataset.points), canvas: !!canvas, colours: colours.size };
})`;

const TABLE_ROWS = `[...document.querySelectorAll('table.saturation tbody tr')].map((tr) => ({
  step: tr.dataset.step,
  served: tr.querySelector('td[data-col="served"]').textContent,
  sent: tr.querySelector('td[data-col="sent"]').textContent,
  saturated: [...tr.querySelectorAll('td.sat')].map((td) => td.dataset.col),
}))`;

const as1 = (x: number) => String(Math.round(x * 10) / 10);

let runDir: string | undefined;

test('the report of a real small study opens in Chromium: no errors, every chart drawn, the table is analysis.json', async (t) => {
  if (!existsSync(CHROMIUM)) {
    console.log(
      `# report.html browser test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_BIN)`,
    );
    t.skip(`no Chromium at ${CHROMIUM}`);
    return;
  }
  const run = await plateau([
    'run',
    ...SMALL_STUDY,
    '--recovery',
    '4',
    '--recovery-rate',
    '20',
    '--json',
    '--out',
    out,
  ]);
  assert.equal(run.code, 0, run.stderr);
  runDir = (JSON.parse(run.stdout) as { runDir: string }).runDir;
  const reportPath = join(runDir, 'report.html');
  assert.ok(existsSync(reportPath), 'plateau run wrote report.html');
  const analysis = JSON.parse(await readFile(join(runDir, 'analysis.json'), 'utf8')) as AnalysisResult;
  const html = await readFile(reportPath, 'utf8');
  assert.doesNotMatch(html, /(src|href)\s*=\s*["']?(https?:)?\/\//i, 'nothing loads from the network');

  const { page, problems } = await open(reportPath);
  const charts = (await page.evaluate(CHARTS_DRAWN)) as {
    id: string;
    points: number;
    canvas: boolean;
    colours: number;
  }[];
  // The charts of plateau's own figures; the database's resources (pg_stat_activity, read by
  // default) follow them, each in a chart of its own.
  const own = charts.filter((c) => !c.id.startsWith('resource-'));
  assert.deepEqual(
    own.map((c) => c.id),
    ['throughput', 'latency', 'pool', 'waiting', 'cpu', 'generator'],
  );
  assert.deepEqual(
    charts.slice(0, own.length).map((c) => c.id),
    own.map((c) => c.id),
    "the resources' charts come after plateau's own",
  );
  for (const chart of own) {
    assert.ok(chart.points > 0, `${chart.id}: has data`);
    assert.ok(chart.canvas, `${chart.id}: drawn on a canvas`);
    // Background, the step bands, grid, axes and at least one line.
    assert.ok(chart.colours >= 4, `${chart.id}: the canvas is not blank (${chart.colours} colours)`);
  }
  const rows = (await page.evaluate(TABLE_ROWS)) as {
    step: string;
    served: string;
    sent: string;
    saturated: string[];
  }[];
  assert.deepEqual(
    rows.map((r) => [r.step, r.sent, r.served]),
    analysis.table.map((r) => [r.step, as1(r.sentPerSec), as1(r.servedPerSec)]),
  );
  if (analysis.verdict.firstLimit.resource === 'pool') {
    const plateauRow = rows.find((r) => r.step === analysis.verdict.plateau!.step)!;
    assert.ok(
      plateauRow.saturated.includes('pool'),
      `the plateau's pool cell is marked: ${JSON.stringify(rows)}`,
    );
    assert.ok(rows[0]!.saturated.length === 0, 'the first step is not marked');
  }
  const headline = (await page.evaluate(
    `document.querySelector('.verdict .headline').textContent`,
  )) as string;
  assert.match(headline, new RegExp(`^First limit: ${analysis.verdict.firstLimit.resource}`));
  const screenshot = join(shots, 'report.png');
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`# screenshot of report.html: ${screenshot}`);
  assert.deepEqual(problems, []);

  // Dark mode: the same page redrawn in the dark palette, still without errors.
  const dark = await open(reportPath, true);
  const background = await dark.page.evaluate(`getComputedStyle(document.body).backgroundColor`);
  assert.equal(background, 'rgb(13, 17, 23)');
  assert.ok(((await dark.page.evaluate(CHARTS_DRAWN)) as { colours: number }[]).every((c) => c.colours >= 4));
  await dark.page.screenshot({ path: join(shots, 'report-dark.png'), fullPage: true });
  assert.deepEqual(dark.problems, []);
});

test('plateau report A B writes a comparison into B: both runs overlaid and how far the plateau moved', async (t) => {
  if (!runDir) {
    t.skip('the study above did not run');
    return;
  }
  // B: the same run under another id and pool size, made from A's files (no second study).
  const b = join(out, 'b-run');
  await cp(runDir, b, { recursive: true });
  const manifest = JSON.parse(await readFile(join(b, 'run.json'), 'utf8')) as RunManifest;
  manifest.id = 'b-run';
  manifest.service = { ...manifest.service, POOL_MAX: 4 };
  await writeFile(join(b, 'run.json'), JSON.stringify(manifest));
  const analysisB = JSON.parse(await readFile(join(b, 'analysis.json'), 'utf8')) as AnalysisResult;
  await writeFile(join(b, 'analysis.json'), JSON.stringify({ ...analysisB, runId: 'b-run' }));

  const made = await plateau(['report', runDir, b]);
  assert.equal(made.code, 0, made.stderr);
  assert.equal(made.stdout.trim().endsWith(join('b-run', 'report.html')), true, made.stdout);
  const { page, problems } = await open(join(b, 'report.html'));
  const moved = (await page.evaluate(`document.getElementById('moved').textContent`)) as string;
  assert.equal(moved, 'moved the plateau 1×');
  const legend = (await page.evaluate(
    `[...document.querySelectorAll('#chart-throughput .u-legend .u-label')].map((e) => e.textContent)`,
  )) as string[];
  assert.ok(legend.includes('A served/s') && legend.includes('B served/s'), legend.join(', '));
  assert.equal(await page.evaluate(`document.querySelectorAll('table.saturation').length`), 2, 'both tables');
  await page.screenshot({ path: join(shots, 'comparison.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('plateau report on a directory that does not exist: the fix, exit 104', async () => {
  const missing = join(out, 'no-such-run');
  const result = await plateau(['report', missing]);
  assert.equal(result.code, 104);
  assert.match(result.stderr, /plateau: .*no-such-run does not exist\nhint: pass a run directory/);
});

test("a service's published meters in Chromium: a chart per resource, the first limit's first and marked, its column, the predicted ceilings", async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`no Chromium at ${CHROMIUM}`);
    return;
  }
  // A run directory made by hand (test/fixtures/jvm-run.ts: k6.csv, run.json, meters.ndjson of
  // a JVM service whose HikariCP pool fills at 80/s), analysed as `plateau analyze` does.
  const dir = join(out, 'jvm-run');
  await writeJvmRun(dir, 'jvm-run');
  const output = await analyzePath(dir);
  assert.equal(output.analysis.verdict.firstLimit.name, 'hikaricp pool orders');
  const { page, problems } = await open(join(dir, 'report.html'));
  const charts = (await page.evaluate(CHARTS_DRAWN)) as { id: string; points: number; colours: number }[];
  assert.deepEqual(
    charts.map((c) => c.id),
    ['throughput', 'latency', 'generator', 'resource-0', 'resource-1', 'resource-2'],
    "no GET /steps: plateau's own pool, waiting and CPU charts give way to the resources'",
  );
  for (const chart of charts) {
    assert.ok(chart.points > 0, `${chart.id}: has data`);
    assert.ok(chart.colours >= 4, `${chart.id}: the canvas is not blank (${chart.colours} colours)`);
  }
  const first = (await page.evaluate(`(() => {
    const figure = document.querySelector('#resources + p + .charts figure');
    return { id: figure.id, marked: figure.classList.contains('first-limit'), title: figure.querySelector('h3').textContent };
  })()`)) as { id: string; marked: boolean; title: string };
  assert.deepEqual(first, {
    id: 'figure-resource-0',
    marked: true,
    title: 'hikaricp pool orders first limit',
  });
  // Hover the pool's chart near its right edge, in the 80/s step: the legend reads that second.
  const over = (await page.$('#chart-resource-0 .u-over'))!;
  await over.scrollIntoView();
  const box = (await over.boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.95, box.y + box.height / 2);
  // uPlot fills its legend on the next frame after the cursor moves.
  await page.waitForFunction(
    `document.querySelector('#chart-resource-0 .u-legend .u-value').textContent !== '--'`,
  );
  const legend = (await page.evaluate(
    `[...document.querySelectorAll('#chart-resource-0 .u-legend .u-series')].map((tr) => [tr.querySelector('.u-label').textContent, tr.querySelector('.u-value').textContent])`,
  )) as [string, string][];
  assert.ok(['17', '18', '19'].includes(legend[0]![1]), `a second of the 80/s step: ${legend[0]}`);
  assert.deepEqual(legend.slice(1), [
    ['in use', '4'],
    ['capacity', '4'],
    ['waiting', '12'],
    ['wait ms', '212.5'],
  ]);
  const cpuLegend = (await page.evaluate(
    `[...document.querySelectorAll('#chart-resource-2 .u-legend .u-label')].map((e) => e.textContent)`,
  )) as string[];
  assert.deepEqual(cpuLegend, ['second', 'cores busy', 'cores']);

  const columns = (await page.evaluate(
    `[...document.querySelectorAll('table.saturation thead th')].filter((th) => th.dataset.col.startsWith('resource:')).map((th) => [th.dataset.col, th.className, th.textContent])`,
  )) as [string, string, string][];
  assert.deepEqual(columns, [
    ['resource:hikaricp pool orders', 'sat', 'hikaricp pool ordersfirst limit'],
    ['resource:executor http', 'flat', 'executor httpflat'],
    ['resource:process cpu', 'flat', 'process cpuflat'],
  ]);
  const rows = (await page.evaluate(TABLE_ROWS)) as { step: string; saturated: string[] }[];
  assert.deepEqual(
    rows.map((r) => [r.step, r.saturated]),
    [
      ['r020', []],
      ['r040', []],
      ['r060', []],
      ['r080', ['resource:hikaricp pool orders']],
    ],
  );
  // The verdict block says what record.txt says.
  const record = await readFile(join(dir, 'record.txt'), 'utf8');
  const line = (name: string) => new RegExp(`^${name}: +(.*)$`, 'm').exec(record)![1];
  const shown = (await page.evaluate(
    `[document.getElementById('predicted').textContent, document.getElementById('scale-on').textContent]`,
  )) as string[];
  assert.deepEqual(shown, [line('predicted'), line('scale on')]);
  assert.match(shown[0]!, /^hikaricp pool orders 64\/s, /);
  await page.screenshot({ path: join(shots, 'resources.png'), fullPage: true });
  console.log(`# screenshot of a report with published resources: ${join(shots, 'resources.png')}`);
  assert.deepEqual(problems, []);
});

test('plateau report reads resources.json from the run directory, and makes it again from meters.ndjson without one', async () => {
  const dir = join(out, 'jvm-report');
  await writeJvmRun(dir, 'jvm-report');
  await analyzePath(dir);
  const charted = async () => {
    const html = await readFile(await writeReport([dir]), 'utf8');
    return [
      ...html.matchAll(
        /<h3>([^<]+?)(?: <span class="limit-tag">first limit<\/span>)?<\/h3>\s*<div class="chart" id="chart-resource-/g,
      ),
    ].map((m) => m[1]);
  };
  const expected = ['hikaricp pool orders', 'executor http', 'process cpu'];
  // Without the meters, resources.json alone gives the charts.
  await unlink(join(dir, 'meters.ndjson'));
  assert.deepEqual(await charted(), expected);
  // Without resources.json (and without meters) there are none, and nothing fails.
  await unlink(join(dir, 'resources.json'));
  assert.deepEqual(await charted(), []);
  // An older analysis with meters.ndjson but no resources.json: they are made again from the meters.
  await writeJvmRun(dir, 'jvm-report');
  assert.deepEqual(await charted(), expected);
});
