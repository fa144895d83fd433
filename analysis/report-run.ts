// A run as report.html shows it, and paths as the report's command line names them.
import { relative } from 'node:path';
import type { AnalysisResult, RunManifest } from '../contract/index.ts';
import type { ReportRun } from './render-report.ts';
import { buildRunSeries, type SeriesSources } from './report-series.ts';

/** A path as the user would type it: relative to the working directory when inside it. */
export function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

/** One run of report.html: its analysis, manifest and record, and the series its charts are drawn from. */
export function reportRun(
  output: { analysis: AnalysisResult; manifest: RunManifest | undefined; seriesSources: SeriesSources },
  recordText: string,
  label: string,
): ReportRun {
  return {
    analysis: output.analysis,
    manifest: output.manifest,
    series: buildRunSeries(output.analysis, output.manifest, output.seriesSources, label),
    recordText,
  };
}
