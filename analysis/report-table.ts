// The report's saturation table: the rendered cells, with the verdict's evidence marked. Pure.
import type { AnalysisResult } from '../contract/index.ts';
import { resourceNames, resourceWords, rowCells } from './render.ts';
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

/** plateau's own GET /steps columns, left out for a service that publishes its resources instead. */
const STEPS_COLUMNS = new Set(['pool', 'waiting', 'waitP95', 'queryP95', 'dbP95', 'loopDelay', 'cpu']);

/** The key of a published resource's column: `resource:hikaricp pool orders`. */
export const resourceColumn = (name: string): string => `resource:${name}`;

/**
 * The column an evidence phrase of the verdict is about. The verdict words each phrase
 * starting with its column (analysis/verdict.ts: "pool 100% checked out of 4", "waiting
 * mean 7, max 8", "wait p95 …", "database p95 …" or "query p95 …", "CPU 48%, event loop
 * …", "the admission gate refused …", which the shed column shows); a published
 * resource's phrase starts with its name, after "also full: " for those full beside the
 * first limit (analysis/verdict/resource-kinds). `resources` are the names the table has:
 * the longest that starts the phrase wins (`executor http queue` over `executor http`).
 * Anything else (a generator's or drops' reason) names no column.
 */
export function evidenceColumn(phrase: string, resources: readonly string[] = []): string | null {
  const named = phrase.startsWith('also full: ') ? phrase.slice('also full: '.length) : phrase;
  const resource = resources
    .filter((name) => named.startsWith(`${name} `))
    .sort((a, b) => b.length - a.length)[0];
  if (resource !== undefined) return resourceColumn(resource);
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
  /** `firstLimit`: the column of the published resource the verdict named the first limit. */
  columns: { key: string; title: string; saturated: boolean; flat: boolean; firstLimit?: boolean }[];
  rows: { step: string; plateau: boolean; invalid: string | null; cells: ReportCell[] }[];
  /** The verdict's phrases, for the caption under the table. */
  saturated: string[];
  flat: string[];
}

/**
 * Builds the table from analysis.json. Nothing is re-decided: the columns the verdict
 * named saturated are marked in the plateau's row and the valid rate rows after it (the
 * load only grew past the knee), and the columns it named flat are marked in the header.
 * Each published resource has a column of its own after REPORT_COLUMNS (its figures as
 * table.md words them), the first limit's first; where no row has plateau's own GET /steps figures, their columns
 * give way to the resources' (as in the terminal table). A run without published resources
 * has REPORT_COLUMNS as they are.
 */
export function reportTable(analysis: AnalysisResult): ReportTable {
  if (analysis.model === 'closed' && analysis.sweep) return sweepTable(analysis.sweep);
  const { evidence, plateau, firstLimit } = analysis.verdict;
  // The first limit's column leads the resources' (as its chart leads theirs).
  const resources = resourceNames(analysis.table).sort(
    (a, b) => Number(b === firstLimit.name) - Number(a === firstLimit.name),
  );
  const column = (phrase: string) => evidenceColumn(phrase, resources);
  const saturatedColumns = new Set(evidence.saturated.map(column).filter((c) => c !== null));
  const flatColumns = new Set(evidence.flat.map(column).filter((c) => c !== null));
  const plateauIndex = plateau ? analysis.table.findIndex((r) => r.step === plateau.step) : -1;
  const stepsFigures = analysis.table.some((r) => r.server !== null);
  const limitColumn = firstLimit.name !== undefined ? resourceColumn(firstLimit.name) : null;
  const columns = [
    ...(resources.length > 0 && !stepsFigures
      ? REPORT_COLUMNS.filter((c) => !STEPS_COLUMNS.has(c.key))
      : REPORT_COLUMNS),
    ...resources.map((name) => ({ key: resourceColumn(name), title: name })),
  ];
  return {
    columns: columns.map((c) => ({
      ...c,
      saturated: saturatedColumns.has(c.key),
      flat: flatColumns.has(c.key),
      ...(c.key === limitColumn ? { firstLimit: true } : {}),
    })),
    rows: analysis.table.map((row, index) => {
      const cells: Record<string, string> = rowCells(row);
      for (const f of row.resources ?? []) cells[resourceColumn(f.name)] = resourceWords(f);
      const pastKnee =
        plateauIndex >= 0 && index >= plateauIndex && row.offeredPerSec !== null && !row.invalid;
      return {
        step: row.step,
        plateau: index === plateauIndex,
        invalid: row.invalid,
        cells: columns.map(({ key }) => ({
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
