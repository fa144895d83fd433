// `plateau report`: report.html for one run directory, or the comparison of two, from what
// the directories hold.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type AnalysisResult,
  ERROR_CODES,
  PlateauError,
  type ResourcesReport,
  type RunManifest,
} from '../contract/index.ts';
import { writeFileAtomic } from '../lib/atomic-write.ts';
import { PLATEAU_VERSION } from '../lib/version.ts';
import { analyze } from './analyze-run.ts';
import { findClientFile } from './client-files.ts';
import { CLIENT_SUMMARY_FILE } from './client-summary.ts';
import { compareRuns, type RunComparison } from './compare.ts';
import { inputStat, readJson } from './input-files.ts';
import { refuseLiveRun } from './live-run.ts';
import { type ReportRun, renderReport } from './render-report.ts';
import { displayPath, reportRun } from './report-run.ts';
import { METER_LOG_FILE } from './resources/meter-log.ts';
import { loadReportAssets } from './templates.ts';

/**
 * Writes report.html for a run directory, or for two (A, then B) a comparison report, from
 * what the directories hold: analysis.json as it was written (so a verdict judged by other
 * criteria stays as judged; recomputed when missing), record.txt, and the per-second series
 * read again from the client summary (the client file when there is none yet), server.json,
 * generator.json and resources.json (made again from meters.ndjson when a run has meters but no
 * resources.json). A run still in progress is refused. The comparison goes into
 * B's directory (where `plateau confirm` writes comparison.json) unless `out` names a file.
 * Returns the path written.
 */
export async function writeReport(dirs: [string] | [string, string], out?: string): Promise<string> {
  const runs: ReportRun[] = [];
  const read: { analysis: AnalysisResult; manifest: RunManifest | undefined }[] = [];
  for (const [index, dir] of dirs.entries()) {
    const info = await inputStat(
      dir,
      'pass a run directory (runs/<id>/) that plateau run, check or analyze wrote',
    );
    if (!info.isDirectory()) {
      throw new PlateauError(ERROR_CODES.INPUT, `${dir} is not a run directory`, {
        hint: 'plateau report reads a run directory (runs/<id>/); for a bare k6 file, run plateau analyze on it first',
      });
    }
    await refuseLiveRun(dir);
    const existing = await readJson<AnalysisResult>(join(dir, 'analysis.json'), 'plateau.analysis');
    const resources = await readJson<ResourcesReport>(join(dir, 'resources.json'), 'plateau.resources');
    const output = await analyze({
      clientFile: await findClientFile(dir),
      // The per-second series come from the client summary: the client file is read only when it has none.
      clientSummary: join(dir, CLIENT_SUMMARY_FILE),
      serverFile: join(dir, 'server.json'),
      manifestFile: join(dir, 'run.json'),
      generatorFile: join(dir, 'generator.json'),
      summaryFile: join(dir, 'summary.json'),
      // The meters are read again only when resources.json is missing (an older analysis).
      ...(resources ? {} : { meterFile: join(dir, METER_LOG_FILE) }),
      ...(existing?.criteria ? { criteria: existing.criteria } : {}),
    });
    const analysis = existing ?? output.analysis;
    const recordText = await readFile(join(dir, 'record.txt'), 'utf8').catch(() => output.record);
    const label = dirs.length === 2 ? (index === 0 ? 'A' : 'B') : '';
    const seriesSources = { ...output.seriesSources, resources: resources ?? output.resources };
    runs.push(reportRun({ ...output, analysis, seriesSources }, recordText, label));
    read.push({ analysis, manifest: output.manifest });
  }
  const comparison: RunComparison | undefined =
    read.length === 2 ? compareRuns(read[0]!, read[1]!) : undefined;
  const target = out ?? join(dirs.at(-1)!, 'report.html');
  await writeFileAtomic(
    target,
    renderReport(await loadReportAssets(), {
      runs: runs as [ReportRun] | [ReportRun, ReportRun],
      ...(comparison ? { comparison } : {}),
      generatedAt: new Date(),
      command: `plateau report ${dirs.map(displayPath).join(' ')}${out ? ` --out ${displayPath(out)}` : ''}`,
      plateauVersion: PLATEAU_VERSION,
    }),
  );
  return target;
}
