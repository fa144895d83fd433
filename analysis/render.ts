// Renders analysis results through the handlebars templates. Pure: templates and results
// in, strings out; the caller reads the template files (analyze-run.ts loadTemplates).

import { basename } from 'node:path';
import type Handlebars from 'handlebars';
import type { AnalysisResult, ResourceStepFigures, RunManifest, SaturationRow } from '../contract/index.ts';
import { databaseDownMsOf, isDatabaseOutageRow } from './database-outage.ts';
import { kneeWords } from './fit/fit-words.ts';
import { runLine } from './run-ending.ts';

/** The compiled templates of `record.txt` and `table.md`. */
export interface Templates {
  record: Handlebars.TemplateDelegate;
  table: Handlebars.TemplateDelegate;
}

/**
 * Compiles the templates' sources (templates/record.txt.hbs, templates/table.md.hbs).
 * Handlebars is imported here, not with the CLI: most processes plateau starts never render.
 */
export async function compileTemplates(sources: { record: string; table: string }): Promise<Templates> {
  const { default: Handlebars } = await import('handlebars');
  // noEscape: these are text and Markdown files, not HTML.
  const compile = (source: string) => Handlebars.compile(source, { noEscape: true, strict: true });
  return { record: compile(sources.record), table: compile(sources.table) };
}

/** A figure for a table or a record: rounded to `digits`, '–' when not measured. */
export const num = (x: number | null | undefined, digits = 1): string =>
  x === null || x === undefined || Number.isNaN(x)
    ? '–'
    : String(Math.round(x * 10 ** digits) / 10 ** digits);

/** The cells of one row, formatted, for the Markdown and the terminal tables. */
export function rowCells(row: SaturationRow): Record<string, string> {
  const s = row.server;
  return {
    step: row.step,
    offered: num(row.offeredPerSec),
    sent: num(row.sentPerSec),
    served: num(row.servedPerSec),
    byTag: num(row.completedByTagPerSec),
    med: num(row.latencyMs.med),
    p95: num(row.latencyMs.p95),
    p95Window: num(row.latencyByWindowMs?.p95),
    inFlight: row.inFlight ? num(row.inFlight.mean, 0) : '–',
    p99: num(row.latencyMs.p99),
    max: num(row.latencyMs.max),
    shed: String(row.failures.shed),
    rateLimited: String(row.failures.rateLimited),
    serverErrors: String(row.failures.serverErrors),
    expired: String(row.failures.expired ?? 0),
    clientErrors: String(row.failures.clientErrors),
    timeouts: String(row.failures.timeouts),
    networkErrors: String(row.failures.networkErrors),
    dropped: String(row.dropped),
    lag: num(row.generator.lagMsMax),
    genCpu: num(row.generator.cpuPctMax, 0),
    pool: num(s?.checkedOutPct, 0),
    waiting: s ? `${num(s.waitingMean)}/${s.waitingMax}` : '–',
    waitP95: num(s?.waitP95Ms),
    queryP95: num(s?.queryP95Ms),
    dbP95: num(s?.databaseP95Ms),
    loopDelay: num(s?.loopDelayP95Ms),
    cpu: num(s?.cpuPct, 0),
    dbDown: s?.databaseDownMs === undefined ? '–' : num(databaseDownMsOf(row) / 1000),
    dbRefused: s?.unavailable === undefined ? '–' : String(s.unavailable.database ?? 0),
  };
}

/**
 * Whether the tables show the database columns (`db down s`, `503 db`): only when the
 * database was unreachable during some step, so the usual table keeps its shape.
 */
export function showsDatabaseColumns(rows: SaturationRow[]): boolean {
  return rows.some(isDatabaseOutageRow);
}

/** The saturation table as Markdown, with the published resources' own table when a run has them. */
export function renderTableMarkdown(templates: Templates, rows: SaturationRow[]): string {
  const resources = resourceNames(rows);
  return templates.table({
    databaseColumns: showsDatabaseColumns(rows),
    rows: rows.map((r) => ({ ...rowCells(r), invalid: r.invalid })),
    invalidRows: rows.filter((r) => r.invalid).map((r) => ({ step: r.step, reason: r.invalid })),
    resources,
    resourceRows: rows.map((r) => ({
      step: r.step,
      cells: resources.map((name) => {
        const f = r.resources?.find((x) => x.name === name);
        return f ? resourceWords(f) : '–';
      }),
    })),
  });
}

/** The published resources' names in the order the rows first show them. */
export function resourceNames(rows: SaturationRow[]): string[] {
  const names: string[] = [];
  for (const row of rows)
    for (const f of row.resources ?? []) if (!names.includes(f.name)) names.push(f.name);
  return names;
}

/** A resource at a step for table.md: `4/4 (100%), waiting 3.2/8, wait 41 ms, hold 52 ms, 3 refused`. */
export function resourceWords(f: ResourceStepFigures): string {
  const parts = [
    f.kind === 'cpu'
      ? `${num(f.inUseMean, 2)}/${num(f.capacity)} cores (${num(f.utilisationPct, 0)}%)`
      : `${num(f.inUseMean)}/${f.capacity === null ? '∞' : num(f.capacity)}${f.utilisationPct !== null ? ` (${num(f.utilisationPct, 0)}%)` : ''}`,
  ];
  if (f.waitingMean !== null) parts.push(`waiting ${num(f.waitingMean)}/${num(f.waitingMax)}`);
  if (f.waitMsMean !== null) parts.push(`wait ${num(f.waitMsMean)} ms`);
  if (f.holdMsMean !== null) parts.push(`hold ${num(f.holdMsMean)} ms`);
  if (f.refused) parts.push(`${num(f.refused, 0)} refused`);
  return parts.join(', ');
}

/** A resource at a step for the terminal: `100% w3.2` (slots, queue), `98%` (cpu), `2.1/∞` (unbounded). */
export function resourceCell(f: ResourceStepFigures): string {
  const use = f.utilisationPct !== null ? `${num(f.utilisationPct, 0)}%` : `${num(f.inUseMean)}/∞`;
  return f.waitingMean !== null && f.kind !== 'cpu' ? `${use} w${num(f.waitingMean)}` : use;
}

/** The terminal table shows this many published resources; table.md has them all. */
const TEXT_RESOURCES = 4;

const TEXT_COLUMNS: [string, string][] = [
  ['step', 'step'],
  ['offered', 'offered/s'],
  ['sent', 'sent/s'],
  ['served', 'served/s'],
  ['p95', 'p95 ms'],
  ['p95Window', 'p95 done'],
  ['inFlight', 'in flight'],
  ['shed', 'shed'],
  ['expired', '504'],
  ['serverErrors', '5xx'],
  ['timeouts', 'timeouts'],
  ['dropped', 'dropped'],
  ['pool', 'pool %'],
  ['waiting', 'waiting'],
  ['waitP95', 'wait p95'],
  ['queryP95', 'query p95'],
  ['dbP95', 'db p95'],
  ['cpu', 'CPU %'],
];

/** The columns of a run whose database was away during some step. */
const DATABASE_COLUMNS: [string, string][] = [
  ['dbDown', 'db down s'],
  ['dbRefused', '503 db'],
];

/** The columns of plateau's own GET /steps figures. */
const SERVER_KEYS = new Set(['pool', 'waiting', 'waitP95', 'queryP95', 'dbP95', 'cpu']);

/** The saturation table as aligned plain text for the terminal (the widest columns). */
export function renderTableText(rows: SaturationRow[]): string {
  // A service plateau did not write has no GET /steps: its own columns give way to its
  // published resources' (the first TEXT_RESOURCES of them).
  const hasServer = rows.some((r) => r.server !== null);
  const resources = resourceNames(rows).slice(0, TEXT_RESOURCES);
  const columns: [string, string][] = [
    ...(hasServer ? TEXT_COLUMNS : TEXT_COLUMNS.filter(([key]) => !SERVER_KEYS.has(key))),
    ...(showsDatabaseColumns(rows) ? DATABASE_COLUMNS : []),
    ...resources.map((name, i): [string, string] => [`resource${i}`, name]),
  ];
  const cells: Record<string, string>[] = rows.map((r) => ({
    ...rowCells(r),
    ...Object.fromEntries(
      resources.map((name, i) => {
        const f = r.resources?.find((x) => x.name === name);
        return [`resource${i}`, f ? resourceCell(f) : '–'];
      }),
    ),
    step: r.invalid ? `${r.step} !` : r.step,
  }));
  const widths = columns.map(([key, title]) => Math.max(title.length, ...cells.map((c) => c[key]!.length)));
  const line = (values: string[]) =>
    values.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  const out = [
    line(columns.map(([, title]) => title)),
    ...cells.map((c) => line(columns.map(([key]) => c[key]!))),
  ];
  const invalid = rows.filter((r) => r.invalid).map((r) => `! ${r.step}: ${r.invalid}`);
  return `${[...out, ...invalid].join('\n')}\n`;
}

/** `POST /orders, a 20-byte body from order.json, 201 expected`. */
function requestWords(request: NonNullable<RunManifest['request']>): string {
  const parts = [`${request.method} ${request.endpoint ?? '/statement?account=N'}`];
  if (request.body)
    parts.push(
      'file' in request.body
        ? `body from ${basename(request.body.file)}`
        : `a ${request.body.text.length}-character body`,
    );
  const headers = Object.keys(request.headers);
  if (headers.length > 0) parts.push(`headers ${headers.join(', ')}`);
  parts.push(request.expectStatus ? `${request.expectStatus} expected` : '200-399 expected');
  return parts.join(', ');
}

/** The service's overload protections and second limit, when a study turned them on. */
function protectionWords(service: Record<string, string | number | boolean>): string {
  const on = (v: unknown) => v === true || v === 'on';
  const parts: string[] = [];
  if (on(service.DEADLINES)) parts.push('deadlines honoured (504)');
  if (on(service.ADMISSION))
    parts.push(
      service.ADMISSION_SIGNAL === 'utilization'
        ? `admission gate on event-loop utilisation (busy at ${service.ADMISSION_HIGH_PCT ?? '?'}%, normal at ${service.ADMISSION_LOW_PCT ?? '?'}%)`
        : `admission gate on event-loop delay (busy at ${service.ADMISSION_HIGH_MS ?? '?'} ms, normal at ${service.ADMISSION_LOW_MS ?? '?'} ms)`,
    );
  if (Number(service.CPU_MS ?? 0) > 0) parts.push(`${service.CPU_MS} ms of CPU per request`);
  return parts.length > 0 ? `, ${parts.join(', ')}` : '';
}

/** Fields of the capacity record, in words. */
export function recordFields(
  analysis: AnalysisResult,
  manifest: RunManifest | undefined,
  confirmedBy?: string,
): Record<string, unknown> {
  const v = analysis.verdict;
  const service = manifest?.service;
  const settings = service
    ? `pg pool max ${service.POOL_MAX ?? '?'}, ${service.SHED === false || service.SHED === 'off' ? 'no load shedding' : `wait queue ${service.QUEUE_MAX ?? '?'}, acquire timeout ${service.ACQUIRE_TIMEOUT_MS ?? '?'} ms`}${protectionWords(service)}`
    : 'settings unknown (no run.json)';
  const request = manifest?.request;
  const custom = request && (request.endpoint !== null || request.method !== 'GET');
  const workload =
    service && !custom
      ? `GET /statement, ${service.PAYLOAD_KB ?? 88} KB statement (gzipped on the wire), ${service.QUERY_MS ?? 50} ms query, autoscaling off`
      : request
        ? requestWords(request)
        : `${manifest?.target ?? 'target unknown'}`;
  const plateau = v.plateau;
  const ended = analysis.ended;
  return {
    run: ended ? runLine(ended, analysis.table) : null,
    service: manifest
      ? service
        ? `statement-api, 1 replica, ${settings}`
        : `${manifest.target} (your service; its own settings)`
      : 'unknown (no run.json)',
    workload,
    steps: manifest?.find?.how ?? null,
    firstLimit: firstLimitWords(v),
    predicted: v.prediction ? predictedWords(v.prediction) : null,
    knee: kneeWords(v.knee, plateau),
    evidence: !plateau
      ? ended
        ? 'none: the run ended before any plateau'
        : 'none needed: no plateau was reached'
      : v.firstLimit.resource === 'inconclusive'
        ? `none: the rows past the knee are not evidence (${v.evidence.saturated.join('; ')})`
        : v.evidence.saturated.length + v.evidence.flat.length > 0
          ? `${v.evidence.saturated.join(', ') || 'nothing saturated'}; flat: ${v.evidence.flat.join(', ') || 'nothing'}`
          : 'no server-side evidence',
    confirmedBy: confirmedBy ?? 'not yet confirmed (plateau confirm <run-dir> --set …)',
    safeLimit: safeLimitWords(analysis),
    repeats: v.repeats?.summary ?? null,
    overload: v.overload,
    recovery: v.recovery.summary,
    database: v.database?.summary ?? 'slots unknown (no database facts in run.json)',
    nextLimit: v.nextLimit,
    scaleOn: v.scaling
      ? `${v.scaling.signal}${v.scaling.cpuAutoscaler ? `; ${v.scaling.cpuAutoscaler}` : ''}`
      : null,
    notes: v.notes,
  };
}

/**
 * The first limit in words: the resource and the plateau's served rate, or the verdict's
 * summary where no resource is named; a plateau that moved between its step and that step's
 * repeat by more than the run's noise is said to be unstable instead of given as a figure.
 */
function firstLimitWords(v: AnalysisResult['verdict']): string {
  const plateau = v.plateau;
  const named = plateau && !['unlisted', 'generator', 'inconclusive'].includes(v.firstLimit.resource);
  const what = named ? (v.firstLimit.name ?? v.firstLimit.resource) : v.firstLimit.summary;
  if (plateau?.unstable) return `${what}; plateau unstable, not written down: ${plateau.unstable}`;
  return named ? `${what}, ${num(plateau.servedPerSec)} served/s` : what;
}

/** The safe limit in words: the rate and its figures, or why there is none, or that it is only a floor. */
function safeLimitWords(analysis: AnalysisResult): string {
  const safe = analysis.verdict.safeLimit;
  const ended = analysis.ended;
  const rateRows = analysis.table.filter((r) => r.offeredPerSec !== null);
  if (safe.ratePerSec === null && safe.unstable)
    return `unstable, not written down: ${safe.unstable}; run the study again with longer holds (plateau confirm <run-dir>)`;
  if (safe.ratePerSec === null && ended && !rateRows.some((r) => !r.cutShort))
    return `not known: the run ended ${ended.atStep ? `during ${ended.atStep}` : 'before its load began'}, before any step could be judged`;
  if (safe.ratePerSec === null && rateRows.length === 0)
    return 'not judged: the run has no rate steps (a check, or requests without step tags)';
  if (safe.ratePerSec === null && rateRows.every((r) => r.cutShort || isDatabaseOutageRow(r)))
    return 'not known: the database was unreachable during every step that could be judged';
  if (safe.ratePerSec === null)
    return `none: even the first step missed p95 < ${analysis.objectives.p95Ms} ms or failures < ${analysis.objectives.failRate * 100}%`;
  const figures = `(p95 ${num(safe.p95Ms)} ms, ${num((safe.failureRate ?? 0) * 100, 2)}% failures)`;
  const rate = `${safe.ratePerSec}/s${safe.jittered ? ' with jittered arrivals' : ''}${safe.fromRun ? ` (from run ${safe.fromRun})` : ''}`;
  if (safe.atLeast)
    return `at least ${rate} ${figures}: the run ended before a step above it could be judged, so how far above it the limit is, is not known`;
  return `${rate} ${figures}`;
}

/** `executor http 38.5/s, hikaricp pool orders 80/s; <finding>`: the ceilings in order, then what the run found. */
function predictedWords(prediction: NonNullable<AnalysisResult['verdict']['prediction']>): string {
  const ceilings = prediction.ceilings.map((c) => `${c.name} ${num(c.ceilingPerSec)}/s`).join(', ');
  return ceilings ? `${ceilings}; ${prediction.finding}` : prediction.finding;
}

/** The capacity record as text. */
export function renderRecord(
  templates: Templates,
  analysis: AnalysisResult,
  manifest: RunManifest | undefined,
  confirmedBy?: string,
): string {
  return templates.record(recordFields(analysis, manifest, confirmedBy));
}
