// What the record notes of how a rate study's files were read: pure, from what analyze read.
import type { RunManifest, SaturationRow } from '../contract/index.ts';
import type { ReadStats } from './client-sample.ts';
import type { ClientSteps } from './client-steps.ts';
import { offeredFromTag } from './step-tags.ts';

/** What the reader of a run that ended early must know of its client file. */
export function endedNotes(
  stats: ReadStats,
  lastSecond: { second: number; samples: number } | undefined,
): string[] {
  const notes: string[] = [];
  if (stats.cut !== undefined) notes.push(cutNote(stats.cut));
  if (lastSecond)
    notes.push(
      `the client data is analysed up to its last complete second: the ${lastSecond.samples} samples of ${new Date(lastSecond.second * 1000).toISOString().slice(11, 19)} UTC, the second the run ended in, are left out`,
    );
  return notes;
}

/** A gzip client file cut short (`cut`: which, and what gunzip said). */
function cutNote(cut: string): string {
  return `${cut}: the file ends mid-stream (its writer was stopped before closing it); it was read to its last whole line`;
}

/** What runNotes reads: the rows, the manifest and what reading the client file found. */
export interface RunNotesInputs {
  rows: SaturationRow[];
  manifest: RunManifest | undefined;
  client: Pick<ClientSteps, 'tagged' | 'totalRequests'>;
  readStats: ReadStats;
  /** Server clock minus client clock, s; null when it cannot be told. */
  clockOffsetS: number | null;
  /** Whether each step's ramp seconds were left out of its rates (`--steady`). */
  steady: boolean;
  /**
   * `--jittered-run`: what checking it noted, and the run whose safe limit the record quotes
   * (null when none is quoted).
   */
  jittered?: { notes: string[]; quotedFromRun: string | null };
  /** The requests k6's summary export counted, when it was read. */
  summaryRequests: number | undefined;
  /** Whether the run ended before its plan did (run.json's `ended`). */
  ended: boolean;
}

/** Steps shorter than this cannot settle: what they show is a transient. */
const SHORTEST_STEP_SECONDS = 3;

/**
 * The notes a rate study's record carries about how its files were read, in the order the
 * record lists them: clocks that differ by a second or more, steps placed by tag rather than
 * window, steps too short to settle, the jittered run quoted, a client file holding fewer
 * requests than k6's summary counted, no samples, no step tags, a gzip file cut short, a damaged file, `--steady`,
 * no run.json, and steps the manifest did not plan. Empty when there is nothing to say.
 */
export function runNotes(inputs: RunNotesInputs): string[] {
  const { rows, manifest, client, readStats, clockOffsetS, summaryRequests } = inputs;
  const notes: string[] = [];
  if (clockOffsetS !== null && Math.abs(clockOffsetS) >= 1) {
    notes.push(
      `the client's and the server's clocks differ by about ${Math.round(clockOffsetS * 10) / 10} s (from when each saw the steps begin): each side's windows use its own clock, and recovery shifts the client's seconds to match`,
    );
  }
  if (client.tagged && rows.some((r) => r.offeredPerSec !== null && r.servedBasis === 'tag')) {
    notes.push(
      'some steps have no window (too few samples to place them): their served rate counts the requests sent in the step, whenever they completed',
    );
  }
  const shortSteps = rows.filter((r) => r.offeredPerSec !== null && r.seconds < SHORTEST_STEP_SECONDS);
  if (shortSteps.length > 0) {
    notes.push(
      `steps shorter than ${SHORTEST_STEP_SECONDS} s (${shortSteps.map((r) => r.step).join(', ')}) cannot settle: queues and rates there are transients, not evidence`,
    );
  }
  if (inputs.jittered) {
    notes.push(...inputs.jittered.notes);
    if (inputs.jittered.quotedFromRun !== null)
      notes.push(
        `the safe limit quoted is that of jittered run ${inputs.jittered.quotedFromRun} (real arrivals cluster)`,
      );
  }
  if (summaryRequests !== undefined && client.totalRequests < summaryRequests) {
    notes.push(
      `the client file holds ${client.totalRequests} of the ${summaryRequests} requests k6's summary counted: ${inputs.ended ? 'the others were in the second the run ended in (left out) or were never written' : 'it was cut short'}`,
    );
  }
  if (client.totalRequests === 0) notes.push('the file holds no http_reqs samples: nothing to analyse');
  if (!client.tagged && client.totalRequests > 0) {
    notes.push(
      'requests carry no step tag: rows are per scenario and time window, and no plateau can be named',
    );
  }
  // A run that ended early says it among its ending's notes (endedNotes).
  if (readStats.cut !== undefined && !inputs.ended) notes.push(cutNote(readStats.cut));
  if (readStats.skipped > 0 || readStats.nulBytes > 0) {
    notes.push(
      `the client file was damaged: ${readStats.skipped} records skipped, ${readStats.nulBytes} NUL bytes removed`,
    );
  }
  if (inputs.steady && !manifest) {
    notes.push('--steady needs run.json (the ramp length): rates are over whole holds');
  }
  if (inputs.steady && manifest) {
    notes.push(`rates leave out the first ${manifest.load.rampSeconds} s (ramp) of each step (--steady)`);
  }
  if (!manifest)
    notes.push(
      'no run.json: service settings, objectives (default p95 < 250 ms, failures < 1%) and hold lengths were not known',
    );
  if (manifest) {
    const planned = manifest.load.stepsPerSec;
    const seen = rows.map((r) => offeredFromTag(r.step)).filter((r): r is number => r !== null);
    const foreign = seen.filter((r) => !planned.includes(r));
    if (foreign.length > 0) {
      notes.push(
        `the client file has steps the manifest did not plan (${foreign.join(', ')}/s): it may come from a different run`,
      );
    }
  }
  return notes;
}
