// report.html: one self-contained page per run (or per comparison of two). Pure: the
// compiled template, the chart library's text and the results in, a string out; the caller
// reads the files (analyze-run.ts loadReportAssets).
import type Handlebars from 'handlebars';
import type { AnalysisResult, RunManifest } from '../contract/index.ts';
import type { RunComparison } from './compare.ts';
import { recordFields } from './render.ts';
import { pageCharts, type RunSeries } from './report-series.ts';
import { type ReportTable, reportTable } from './report-table.ts';

/** The template and the chart library, inlined into every page so it opens from disk with no network. */
export interface ReportAssets {
  template: Handlebars.TemplateDelegate;
  /** uPlot's minified IIFE build and its stylesheet (node_modules/uplot/dist). */
  uplotJs: string;
  uplotCss: string;
  uplotVersion: string;
}

/**
 * Compiles templates/report.html.hbs; handlebars escapes every `{{value}}` as HTML. Imported
 * here, not with the CLI, as in compileTemplates.
 */
export async function compileReportTemplate(source: string): Promise<Handlebars.TemplateDelegate> {
  const { default: Handlebars } = await import('handlebars');
  return Handlebars.compile(source);
}

/** One run as the page shows it. */
export interface ReportRun {
  analysis: AnalysisResult;
  manifest: RunManifest | undefined;
  series: RunSeries;
  /** record.txt as written, shown as it is for analyses this page cannot lay out (closed model). */
  recordText: string;
}

/** What the page is made from. */
export interface ReportInput {
  /** One run, or A then B for a comparison. */
  runs: [ReportRun] | [ReportRun, ReportRun];
  comparison?: RunComparison;
  /** When the page was made, and the command that remakes it (for the footer). */
  generatedAt: Date;
  command: string;
  plateauVersion: string;
}

/**
 * JSON for a `<script type="application/json">` element: `<` is written `\u003c`, so no
 * `</script>` or `<!--` in a value can end the element early, and U+2028/2029 are escaped
 * for old parsers. JSON.parse reads it back unchanged.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Library text inside an inline `<script>`/`<style>`: nothing in it may close the element. */
const inline = (text: string, element: 'script' | 'style') =>
  text.replace(new RegExp(`</${element}`, 'gi'), `<\\/${element}`);

/** True for an analysis of a closed-model (concurrency) sweep, which has no rate table to lay out. */
function isClosedModel(analysis: AnalysisResult): boolean {
  return (analysis as { model?: string }).model === 'closed';
}

const words = (manifest: RunManifest | undefined): string[] => {
  if (!manifest) return ['no run.json: settings unknown'];
  const load = manifest.load;
  const model =
    load.model === 'closed'
      ? `closed model: ${(load.vusLevels ?? []).join(', ')} clients, ${load.holdSeconds} s each, deadline ${Math.round((load.timeoutSeconds ?? 60) * 1000)} ms, ${load.retries ?? 0} retries${load.recoveryVus ? `; then ${load.recoveryVus} clients for ${load.recoverySeconds} s` : ''}`
      : null;
  return [
    model ??
      `steps ${load.stepsPerSec.join(', ')}/s, ${load.holdSeconds} s holds (${load.rampSeconds} s ramp), then ${load.recoveryRatePerSec}/s for ${load.recoverySeconds} s${load.jitterSeconds > 0 ? `, arrivals jittered up to ${load.jitterSeconds} s` : ''}`,
    `objectives: p95 under ${load.p95Ms} ms, failures under ${load.failRate * 100}%`,
    // Older or hand-written run.json files may lack these: say what is known.
    [
      manifest.engine
        ? `${manifest.engine.name === 'k6' ? 'k6' : 'embedded engine'} ${manifest.engine.version}`
        : '',
      manifest.target ? `target ${manifest.target}` : '',
      manifest.status ?? '',
    ]
      .filter((w) => w !== '')
      .join(', '),
  ];
};

const when = (iso: string | undefined) =>
  iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : 'date unknown (no run.json)';

function runView(run: ReportRun, confirmedBy: string | undefined) {
  const { analysis, manifest } = run;
  const closed = isClosedModel(analysis);
  const fields = closed ? undefined : recordFields(analysis, manifest, confirmedBy);
  // record.txt's fields in its order; `steps`, `predicted`, `knee`, `repeats` and `scale on` only where the run has them.
  const record = fields
    ? [
        ['run', fields.run],
        ['service', fields.service],
        ['workload', fields.workload],
        ['steps', fields.steps],
        ['first limit', fields.firstLimit],
        ['predicted', fields.predicted],
        ['knee', fields.knee],
        ['evidence', fields.evidence],
        ['confirmed by', fields.confirmedBy],
        ['safe limit', fields.safeLimit],
        ['repeats', fields.repeats],
        ['overload', fields.overload],
        ['recovery', fields.recovery],
        ['database', fields.database],
        ['next limit', fields.nextLimit],
        ['scale on', fields.scaleOn],
      ]
        .filter(([, value]) => value !== null && value !== undefined)
        .map(([name, value]) => ({ name, value: String(value) }))
    : [];
  const table: ReportTable | null = closed && !analysis.sweep ? null : reportTable(analysis);
  return {
    label: run.series.label,
    runId: analysis.runId ?? 'no run id',
    date: when(manifest?.startedAt),
    service: fields ? String(fields.service) : (manifest?.target ?? ''),
    workload: fields ? String(fields.workload) : '',
    plan: words(manifest),
    // A run that did not complete says so before anything else (record.txt's first line).
    ended: fields?.run ? String(fields.run) : null,
    headline: fields
      ? String(fields.firstLimit)
      : `goodput peak ${analysis.sweep?.verdict.summary ?? 'unknown'} (record below)`,
    limitResource: closed ? '' : analysis.verdict.firstLimit.resource,
    // The ceilings predicted from the first step and what the run found, and the signal to
    // scale on, as record.txt words them (null where the verdict has none).
    predicted: fields?.predicted ? String(fields.predicted) : null,
    scaleOn: fields?.scaleOn ? String(fields.scaleOn) : null,
    safeLimit: fields ? String(fields.safeLimit) : '',
    overload: fields ? String(fields.overload) : '',
    recovery: fields ? String(fields.recovery) : '',
    closed,
    record,
    notes: closed ? [] : analysis.verdict.notes,
    recordText: run.recordText,
    table,
    invalidRows: (table?.rows ?? [])
      .filter((r) => r.invalid)
      .map((r) => ({ step: r.step, reason: r.invalid })),
  };
}

/** The page as a string. */
export function renderReport(assets: ReportAssets, input: ReportInput): string {
  const comparison = input.comparison;
  const runs = input.runs.map((run, index) =>
    runView(run, index === input.runs.length - 1 ? (comparison?.confirmedBy ?? undefined) : undefined),
  );
  const main = runs.at(-1)!;
  const { charts, resources } = pageCharts(input.runs.map((r) => r.series));
  const fmt = (x: number | null) => (x === null ? '–' : String(Math.round(x * 10) / 10));
  const title = comparison
    ? `plateau comparison: ${runs[0]!.runId} vs ${main.runId}`
    : `plateau capacity report: ${main.runId}`;
  return assets.template({
    title,
    main,
    // A and B, the run itself last (its table and record first on the page).
    runs: [...runs].reverse(),
    comparison: comparison
      ? {
          changed:
            comparison.changes.length === 0
              ? 'nothing'
              : comparison.changes.map((c) => `${c.key} ${c.before} → ${c.after}`).join(', '),
          plateau: `${fmt(comparison.plateauBefore)}/s → ${fmt(comparison.plateauAfter)}/s${comparison.ratio === null ? '' : ` (${comparison.ratio}×)`}`,
          moved:
            comparison.ratio === null
              ? 'the plateau could not be compared (one run has none)'
              : `moved the plateau ${comparison.ratio}×`,
          limits: `${comparison.limitBefore} → ${comparison.limitAfter}${comparison.sameLimit ? ' (same resource)' : ''}`,
          summary: comparison.summary,
          rows: comparison.rows.map((r) => ({
            step: r.step,
            servedA: fmt(r.servedBefore),
            servedB: fmt(r.servedAfter),
            p95A: fmt(r.p95Before),
            p95B: fmt(r.p95After),
          })),
        }
      : null,
    footer: {
      generatedAt: `${input.generatedAt.toISOString().slice(0, 19).replace('T', ' ')} UTC`,
      command: input.command,
      plateauVersion: input.plateauVersion,
      node: input.runs.at(-1)!.manifest?.versions?.node ?? process.version,
      machine: machineWords(input.runs.at(-1)!.manifest),
      uplotVersion: assets.uplotVersion,
    },
    charts: charts.map((c) => ({ id: c.id, title: c.title, caption: c.caption })),
    resourceCharts: resources.map((c) => ({
      id: c.id,
      title: c.title,
      caption: c.caption,
      firstLimit: c.firstLimit === true,
    })),
    dataJson: scriptJson({ charts: [...charts, ...resources], runs: input.runs.map((r) => r.series) }),
    uplotJs: inline(assets.uplotJs, 'script'),
    uplotCss: inline(assets.uplotCss, 'style'),
  });
}

function machineWords(manifest: RunManifest | undefined): string {
  const m = manifest?.machine;
  if (!m) return 'machine unknown';
  const commit = manifest.versions?.gitCommit;
  return `${m.cpus} CPUs, ${Math.round(m.memoryMb / 1024)} GiB, ${m.platform}${commit ? `, plateau commit ${commit.slice(0, 10)}` : ''}`;
}
