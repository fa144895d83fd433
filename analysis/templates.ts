// The templates analysis renders with, read from templates/ (and node_modules for the
// report's chart library) and compiled once per process.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { compileTemplates, type Templates } from './render.ts';
import { compileReportTemplate, type ReportAssets } from './render-report.ts';
import type { SweepTemplates } from './render-sweep.ts';

const loaded = new Map<string, Templates>();

/** A record and table template pair from templates/, compiled once per process. */
async function loadPair(record: string, table: string): Promise<Templates> {
  const dir = new URL('../templates/', import.meta.url);
  let pair = loaded.get(record);
  if (!pair) {
    pair = await compileTemplates({
      record: await readFile(new URL(record, dir), 'utf8'),
      table: await readFile(new URL(table, dir), 'utf8'),
    });
    loaded.set(record, pair);
  }
  return pair;
}

/** The record and table templates of a rate study. */
export function loadTemplates(): Promise<Templates> {
  return loadPair('record.txt.hbs', 'table.md.hbs');
}

/** The record and table templates of a closed-model sweep. */
export function loadSweepTemplates(): Promise<SweepTemplates> {
  return loadPair('sweep.txt.hbs', 'sweep-table.md.hbs');
}

let reportAssets: ReportAssets | undefined;

/**
 * report.html's template and the chart library it inlines (uPlot's minified build and
 * stylesheet, read from node_modules at render time), once per process.
 */
export async function loadReportAssets(): Promise<ReportAssets> {
  if (reportAssets) return reportAssets;
  const require = createRequire(import.meta.url);
  const uplot = (path: string) => readFile(require.resolve(`uplot/${path}`), 'utf8');
  const pkg = JSON.parse(await uplot('package.json')) as { version: string };
  reportAssets = {
    template: await compileReportTemplate(
      await readFile(new URL('../templates/report.html.hbs', import.meta.url), 'utf8'),
    ),
    uplotJs: await uplot('dist/uPlot.iife.min.js'),
    uplotCss: await uplot('dist/uPlot.min.css'),
    uplotVersion: pkg.version,
  };
  return reportAssets;
}
