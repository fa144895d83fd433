// The report's saturation table: the rendered cells, with the verdict's evidence marked. Pure.
import type { AnalysisResult } from '../contract/index.ts';
import { rowCells } from './render.ts';
import { SWEEP_COLUMNS, sweepCells } from './render-sweep.ts';

/** The report's columns: the terminal table's, and the loop delay (keys of rowCells). */
export const REPORT_COLUMNS: { key: string; title: string }[] = [
  { key: 'step', title: 'step' },
  { key: 'offered', title: 'offered/s' },
  { key: 'sent', title: 'sent/s' },
  { key: 'served', title: 'served/s' },
  { key: 'p95', title: 'p95 ms' },
  { key: 'p95Window', title: 'p95 done ms' },
  { key: 'inFlight', title: 'in flight' },
  { key: 'shed', title: 'shed' },
  { key: 'expired', title: '504' },
  { key: 'serverErrors', title: 'other 5xx' },
  { key: 'timeouts', title: 'timeouts' },
  { key: 'dropped', title: 'dropped' },
  { key: 'pool', title: 'pool %' },
  { key: 'waiting', title: 'waiting mean/max' },
  { key: 'waitP95', title: 'wait p95 ms' },
  { key: 'queryP95', title: 'query p95 ms' },
  { key: 'dbP95', title: 'db p95 ms' },
  { key: 'loopDelay', title: 'loop delay p95 ms' },
  { key: 'cpu', title: 'CPU %' },
];

/**
 * The column an evidence phrase of the verdict is about. The verdict words each phrase
 * starting with its column (analysis/verdict.ts: "pool 100% checked out of 4", "waiting
 * mean 7, max 8", "wait p95 …", "database p95 …" or "query p95 …", "CPU 48%, event loop
 * …", "the admission gate refused …", which the shed column shows); anything else (a generator's or drops' reason) names no column.
 */
export function evidenceColumn(phrase: string): string | null {
  if (phrase.startsWith('pool ')) return 'pool';
  if (phrase.startsWith('wait p95')) return 'waitP95';
  if (phrase.startsWith('waiting ')) return 'waiting';
  if (phrase.startsWith('database p95')) return 'dbP95';
  if (phrase.startsWith('query p95')) return 'queryP95';
  if (phrase.startsWith('CPU ')) return 'cpu';
  if (phrase.startsWith('the admission gate')) return 'shed';
  return null;
}

/** One cell as the page shows it. */
export interface ReportCell {
  key: string;
  text: string;
  /** Saturated at or past the plateau, per the verdict's evidence. */
  saturated: boolean;
}

/** The table as the page shows it. */
export interface ReportTable {
  columns: { key: string; title: string; saturated: boolean; flat: boolean }[];
  rows: { step: string; plateau: boolean; invalid: string | null; cells: ReportCell[] }[];
  /** The verdict's phrases, for the caption under the table. */
  saturated: string[];
  flat: string[];
}

/**
 * Builds the table from analysis.json. Nothing is re-decided: the columns the verdict
 * named saturated are marked in the plateau's row and the valid rate rows after it (the
 * load only grew past the knee), and the columns it named flat are marked in the header.
 */
export function reportTable(analysis: AnalysisResult): ReportTable {
  if (analysis.model === 'closed' && analysis.sweep) return sweepTable(analysis.sweep);
  const { evidence, plateau } = analysis.verdict;
  const saturatedColumns = new Set(evidence.saturated.map(evidenceColumn).filter((c) => c !== null));
  const flatColumns = new Set(evidence.flat.map(evidenceColumn).filter((c) => c !== null));
  const plateauIndex = plateau ? analysis.table.findIndex((r) => r.step === plateau.step) : -1;
  return {
    columns: REPORT_COLUMNS.map((c) => ({
      ...c,
      saturated: saturatedColumns.has(c.key),
      flat: flatColumns.has(c.key),
    })),
    rows: analysis.table.map((row, index) => {
      const cells = rowCells(row);
      const pastKnee =
        plateauIndex >= 0 && index >= plateauIndex && row.offeredPerSec !== null && !row.invalid;
      return {
        step: row.step,
        plateau: index === plateauIndex,
        invalid: row.invalid,
        cells: REPORT_COLUMNS.map(({ key }) => ({
          key,
          text: cells[key] ?? '–',
          saturated: pastKnee && saturatedColumns.has(key),
        })),
      };
    }),
    saturated: evidence.saturated,
    flat: evidence.flat,
  };
}

/** A closed-model sweep's table: one row per level, the goodput peak's row marked. */
function sweepTable(sweep: NonNullable<AnalysisResult['sweep']>): ReportTable {
  const peak = sweep.verdict.peak?.step;
  return {
    columns: SWEEP_COLUMNS.map(([key, title]) => ({ key, title, saturated: false, flat: false })),
    rows: sweep.rows.map((row) => {
      const cells = sweepCells(row);
      return {
        step: row.step,
        plateau: row.step === peak,
        invalid: null,
        cells: SWEEP_COLUMNS.map(([key]) => ({ key, text: cells[key] ?? '–', saturated: false })),
      };
    }),
    saturated: [],
    flat: [],
  };
}
