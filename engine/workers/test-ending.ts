// How a test run by several workers ended: one exit code and reason from theirs. Pure.
import { EXIT_CODES } from '../../contract/index.ts';

/** One worker as the coordinator saw it end. */
export interface WorkerEnding {
  index: number;
  /** Its execution segment, `1/4:1/2`. */
  segment: string;
  pid: number | undefined;
  /** The result it reported before exiting; none when it died. */
  result: { exitCode: number; reason: string } | undefined;
  /** How its process ended: an exit code, or the signal that killed it. */
  exit: { code: number | null; signal: NodeJS.Signals | null };
  /** Whether it wrote the test's summary (teardown, thresholds, handleSummary). */
  summary: boolean;
}

/**
 * The test's exit code and reason: a worker that died (ended without reporting a result:
 * killed, crashed) fails the test with 122, as a load generator that died does in a study,
 * naming it; the others' data are kept either way. Else the first worker that failed on its
 * own (a script exception, a bad option, a setup timeout: its own code; a worker that only
 * closed its share ends 0). Else the code of the worker that ended the test, whose
 * thresholds and stop cause are everyone's.
 */
export function decideEnding(
  workers: readonly WorkerEnding[],
  count: number,
): { exitCode: number; reason: string } {
  const dead = workers.find((w) => w.result === undefined);
  if (dead) {
    const how = dead.exit.signal
      ? `was killed by ${dead.exit.signal}`
      : `exited with ${dead.exit.code} unannounced`;
    return {
      exitCode: EXIT_CODES.generatorDied,
      reason: `engine worker ${dead.index + 1} of ${count} (segment ${dead.segment}${dead.pid === undefined ? '' : `, pid ${dead.pid}`}) ${how} before the test ended: the other workers' data are kept, and its share of the outputs ends at its last save`,
    };
  }
  // A worker that only closes its share ends 0; any other code is a failure of its own.
  const failed = workers.find((w) => !w.summary && w.result!.exitCode !== EXIT_CODES.ok);
  if (failed) return failed.result!;
  return workers.find((w) => w.summary)?.result ?? { exitCode: EXIT_CODES.ok, reason: '' };
}
