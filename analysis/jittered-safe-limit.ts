// The safe limit of a jittered run of the same configuration, quoted in an evenly paced run's record.
import { join } from 'node:path';
import {
  type AnalysisResult,
  ERROR_CODES,
  PlateauError,
  type RunManifest,
  type VerdictCriteria,
} from '../contract/index.ts';
import { readJson } from './input-files.ts';
import { DEFAULT_CRITERIA } from './verdict.ts';

/**
 * The safe limit of the jittered run at `dir`, to quote in an evenly paced run's record:
 * real arrivals cluster, and a limit measured with even arrivals flatters the service.
 * The run must be a completed, jittered study of the same service, target and steps, or
 * the user is told why not (exit 104). Judged by other criteria, it is noted and not quoted.
 */
export async function jitteredSafeLimit(
  dir: string,
  manifest: RunManifest,
  criteria: VerdictCriteria,
  notes: string[],
): Promise<{ id: string; safeLimit: AnalysisResult['verdict']['safeLimit'] } | undefined> {
  const refuse = (why: string) =>
    new PlateauError(ERROR_CODES.INPUT, `--jittered-run ${dir}: ${why}`, {
      hint: 'pass the run directory of a completed `plateau run --jitter S` with the same --set, --target and --steps',
    });
  const other = await readJson<RunManifest>(join(dir, 'run.json'), 'plateau.run');
  if (!other) throw refuse('it holds no run.json');
  if (other.status !== 'completed') throw refuse(`that run is ${other.status}, not completed`);
  if (other.load.jitterSeconds <= 0) throw refuse('that run was not jittered (--jitter 0)');
  if (manifest.load.jitterSeconds > 0)
    throw refuse('this run is jittered itself; its own safe limit is the one to quote');
  const same =
    JSON.stringify(other.service) === JSON.stringify(manifest.service) &&
    other.target === manifest.target &&
    other.load.stepsPerSec.join(',') === manifest.load.stepsPerSec.join(',');
  if (!same) throw refuse("its service settings, target or steps differ from this run's");
  const analysis = await readJson<AnalysisResult>(join(dir, 'analysis.json'), 'plateau.analysis');
  if (!analysis) throw refuse('it has not been analysed (run `plateau analyze` on it first)');
  if (analysis.verdict.safeLimit.ratePerSec == null) {
    notes.push(`jittered run ${other.id} has no safe limit: none is quoted from it`);
    return undefined;
  }
  // Its safe limit follows from where its plateau was judged to be: only quote it when it
  // was judged by the same criteria (analyses written before criteria existed used the defaults).
  const theirs = analysis.criteria ?? DEFAULT_CRITERIA;
  const differ = (Object.keys(criteria) as (keyof VerdictCriteria)[]).some(
    (key) => theirs[key] !== criteria[key],
  );
  if (differ) {
    notes.push(
      `jittered run ${other.id} was judged by other criteria: its safe limit is not quoted (re-analyse it with the same flags)`,
    );
    return undefined;
  }
  return { id: other.id, safeLimit: analysis.verdict.safeLimit };
}
