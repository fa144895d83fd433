// A run directory's analysis and manifest, for commands that compare or confirm runs.
import { join } from 'node:path';
import type { AnalysisResult, RunManifest } from '../contract/index.ts';
import { analyzePath } from './analyze-run.ts';
import { readJson } from './input-files.ts';

/** A run directory's analysis (recomputed when analysis.json is missing) and manifest. */
export async function readRun(
  dir: string,
): Promise<{ analysis: AnalysisResult; manifest: RunManifest | undefined; dir: string }> {
  const manifest = await readJson<RunManifest>(join(dir, 'run.json'), 'plateau.run');
  const existing = await readJson<AnalysisResult>(join(dir, 'analysis.json'), 'plateau.analysis').catch(
    () => undefined,
  );
  const analysis = existing ?? (await analyzePath(dir)).analysis;
  return { analysis, manifest, dir };
}
