// Renders a closed-model sweep: its record (templates/sweep.txt.hbs) and its table.
import type { AnalysisResult, RunManifest, SweepRow } from '../contract/index.ts';
import { uslWords } from './fit/fit-words.ts';
import { num, recordFields, type Templates } from './render.ts';

/** The compiled templates of a sweep's record.txt and table.md (templates/sweep*.hbs). */
export type SweepTemplates = Templates;

/** The cells of one level, formatted, for the terminal, Markdown and report tables. */
export function sweepCells(row: SweepRow): Record<string, string> {
  const s = row.server;
  return {
    step: row.step,
    clients: String(row.clients),
    attempts: num(row.attemptsPerSec),
    goodput: num(row.goodputPerSec),
    completed: num(row.completedPerSec),
    expired: String(row.expired),
    timeouts: String(row.timeouts),
    shed: String(row.shed),
    retries: String(row.retries),
    med: num(row.latencyMs.med),
    p95: num(row.latencyMs.p95),
    okP95: num(row.okP95Ms),
    inRequests: num(row.inRequests?.measured),
    predicted: num(row.inRequests?.predicted),
    pool: num(s?.checkedOutPct, 0),
    waiting: s ? `${num(s.waitingMean)}/${s.waitingMax}` : '–',
    cpu: num(s?.cpuPct, 0),
  };
}

/** The sweep's columns: key of sweepCells, title. */
export const SWEEP_COLUMNS: [string, string][] = [
  ['step', 'level'],
  ['clients', 'clients'],
  ['attempts', 'attempts/s'],
  ['goodput', 'goodput/s'],
  ['completed', 'completed/s'],
  ['expired', '504'],
  ['timeouts', 'timeouts'],
  ['shed', 'shed'],
  ['retries', 'retries'],
  ['p95', 'p95 ms'],
  ['okP95', 'p95 2xx'],
  ['inRequests', 'in requests'],
  ['pool', 'pool %'],
  ['waiting', 'waiting'],
  ['cpu', 'CPU %'],
];

/** The sweep as aligned plain text for the terminal. */
export function renderSweepTableText(rows: SweepRow[]): string {
  const all = rows.map(sweepCells);
  const widths = SWEEP_COLUMNS.map(([key, title]) =>
    Math.max(title.length, ...all.map((c) => c[key]!.length)),
  );
  const line = (values: string[]) =>
    values.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  return [
    line(SWEEP_COLUMNS.map(([, t]) => t)),
    ...all.map((c) => line(SWEEP_COLUMNS.map(([k]) => c[k]!))),
  ].join('\n');
}

/** The sweep as Markdown. */
export function renderSweepTableMarkdown(templates: SweepTemplates, rows: SweepRow[]): string {
  return templates.table({ rows: rows.map(sweepCells) });
}

/**
 * The record of a sweep: the service, the load, the goodput peak, the USL fitted to goodput
 * (absent from analyses written before it) and what happened past the peak.
 */
export function renderSweepRecord(
  templates: SweepTemplates,
  analysis: AnalysisResult,
  manifest: RunManifest | undefined,
): string {
  const sweep = analysis.sweep!;
  const common = recordFields(analysis, manifest);
  const load = manifest?.load;
  const model = load
    ? `closed: ${(load.vusLevels ?? []).join(', ')} clients, ${load.holdSeconds} s each, no think time, deadline ${num((load.timeoutSeconds ?? 60) * 1000, 0)} ms, ${load.retries ? `${load.retries} retries (Retry-After honoured, else jittered backoff)` : 'no retries'}${load.recoveryVus ? `; then ${load.recoveryVus} clients for ${load.recoverySeconds} s` : ''}`
    : 'closed (levels of clients; no run.json)';
  const v = sweep.verdict;
  return templates.record({
    run: common.run,
    service: common.service,
    workload: common.workload,
    model,
    peak: v.peak ? `${v.summary.split(';')[0]} (p95 ${num(v.peak.p95Ms)} ms)` : v.summary,
    usl: v.usl ? uslWords(v.usl) : null,
    limit: v.limit,
    pastPeak: v.pastPeak,
    littlesLaw: v.littlesLaw,
    recovery: v.recovery.summary,
    notes: analysis.verdict.notes,
  });
}
