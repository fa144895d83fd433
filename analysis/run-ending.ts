// A run that did not complete: how it ended, the rows it cut short, and what of it stands.
import type { RunEnding, RunManifest, SaturationRow } from '../contract/index.ts';
import type { ClientSample } from './client-sample.ts';
import { clientsFromTag, DRAIN_SECONDS, offeredFromTag, planIndexOfTag } from './step-tags.ts';

/**
 * A step with fewer than this share of the requests its plan sent was cut short by the end
 * of the run: what it measured is a fraction of a step, not evidence about its rate.
 */
export const CUT_SHORT_SHARE = 0.9;

/**
 * How a run ended when it did not complete, from its run.json: `ended` when the run wrote
 * it; for a run still marked `running` (the plateau process itself was killed, or crashed),
 * or one written before `ended` existed, what its status and last warning say. Undefined
 * for a completed run and without a manifest (a bare k6 file: nothing says it ended early).
 */
export function endingOf(manifest: RunManifest | undefined): RunEnding | undefined {
  // A manifest that states no status (a hand-written one) says nothing about how it ended.
  if (!manifest?.status || manifest.status === 'completed') return undefined;
  if (manifest.ended) return manifest.ended.reason === 'completed' ? undefined : manifest.ended;
  const atStep = manifest.reachedStep;
  if (manifest.status === 'running') {
    return {
      reason: 'failed',
      detail: 'plateau stopped before the run ended (run.json still says running)',
      atStep,
    };
  }
  return {
    reason: manifest.status === 'interrupted' ? 'interrupted' : 'failed',
    detail: manifest.status === 'interrupted' ? 'interrupted' : (manifest.warnings?.at(-1) ?? 'failed'),
    atStep,
  };
}

/**
 * Requests the capacity ramp sends in `step` (rates from run.json, a repeat `r040b` the
 * rate's second run): each rate's hold, less the ramp's shortfall as it climbs from the
 * previous rate (from 0 before the first; more, ramping down to a repeat), and
 * the recovery rate over `drain` and `recovery`. Null for a step the plan cannot say
 * (a closed-model level, an untagged window).
 */
export function plannedRequests(step: string, load: RunManifest['load']): number | null {
  const rates = load.stepsPerSec;
  const rate = offeredFromTag(step);
  if (rate !== null) {
    const index = planIndexOfTag(step, rates);
    if (index < 0) return null;
    const previous = index === 0 ? 0 : rates[index - 1]!;
    const ramp = Math.min(load.rampSeconds, load.holdSeconds);
    // ∫ over the hold: the ramp moves linearly from `previous` (down to a repeat of a lower
    // rate, up otherwise), then `rate` to its end.
    return rate * (load.holdSeconds - ramp) + ((previous + rate) / 2) * ramp;
  }
  const drainSeconds = Math.min(DRAIN_SECONDS, load.recoverySeconds);
  if (step === 'drain') return load.recoveryRatePerSec * drainSeconds;
  if (step === 'recovery') return load.recoveryRatePerSec * (load.recoverySeconds - drainSeconds);
  return null;
}

/**
 * Marks the rows a run that did not complete cut short, in place: an open-model row with
 * fewer than {@link CUT_SHORT_SHARE} of its planned requests, a closed-model level whose
 * sends span less than that share of its hold. Each becomes invalid with the reason, and
 * `cutShort`, which keeps it out of every judgement.
 */
export function markCutShort(rows: SaturationRow[], load: RunManifest['load']): void {
  for (const row of rows) {
    let reason: string | undefined;
    let planned: number | null = null;
    if (load.model === 'closed' && clientsFromTag(row.step) !== null) {
      const span = row.window ? row.window.endS - row.window.startS : null;
      planned = load.holdSeconds;
      if (span !== null && span < CUT_SHORT_SHARE * load.holdSeconds)
        reason = `the run ended during it: ${round(span)} s of its ${load.holdSeconds} s sent`;
    } else {
      planned = plannedRequests(row.step, load);
      // Starts are whole, and one planned on a step's boundary goes to either side of it: a
      // step of 5 planned requests that sent 4 ran to its end.
      if (planned !== null && planned >= 1 && row.requests < CUT_SHORT_SHARE * planned - 1)
        reason = `the run ended during it: ${row.requests} of its ${Math.round(planned)} planned requests sent`;
    }
    if (reason === undefined || planned === null) continue;
    row.cutShort = { plannedRequests: Math.round(planned) };
    row.invalid = row.invalid ? `${reason}; ${row.invalid}` : reason;
  }
}

/** The step rows (rates or levels) that stand as evidence: valid and not cut short. */
export function rowsStanding(rows: SaturationRow[]): string[] {
  return rows
    .filter((r) => (r.offeredPerSec !== null || clientsFromTag(r.step) !== null) && !r.invalid)
    .map((r) => r.step);
}

/**
 * The record's first line for a run that did not complete: `did not complete: the
 * statement service died (killed by SIGKILL) during r080; rows r020–r060 stand`. Rows that
 * follow each other in the table are written as a range.
 */
export function runLine(ending: RunEnding, rows: SaturationRow[]): string {
  const where = ending.atStep ? ` during ${ending.atStep}` : ' before the load began';
  return `did not complete: ${ending.detail}${where}; ${standingWords(rows)}`;
}

function standingWords(rows: SaturationRow[]): string {
  const steps = rows.filter((r) => r.offeredPerSec !== null || clientsFromTag(r.step) !== null);
  const standing = new Set(rowsStanding(rows));
  if (standing.size === 0) return 'no row stands';
  // Runs of consecutive standing rows: r020–r060, r100.
  const runs: string[][] = [];
  let current: string[] = [];
  for (const row of steps) {
    if (standing.has(row.step)) current.push(row.step);
    else if (current.length > 0) {
      runs.push(current);
      current = [];
    }
  }
  if (current.length > 0) runs.push(current);
  const words = runs.map((r) => (r.length === 1 ? r[0]! : `${r[0]}–${r.at(-1)}`)).join(', ');
  return `${standing.size === 1 ? 'row' : 'rows'} ${words} ${standing.size === 1 ? 'stands' : 'stand'}`;
}

/**
 * Hands samples on to `onSample`, holding back those of the newest second seen until a
 * later second begins: at `close()` the held ones, the second the run ended in (only part
 * of which was written), are dropped. Samples of older seconds arriving late pass at once,
 * so memory holds one second of samples.
 */
export class CompleteSeconds {
  readonly #onSample: (sample: ClientSample) => void;
  #newest = Number.NEGATIVE_INFINITY;
  #held: ClientSample[] = [];

  constructor(onSample: (sample: ClientSample) => void) {
    this.#onSample = onSample;
  }

  add(sample: ClientSample): void {
    const second = Math.floor(sample.timeS);
    if (second < this.#newest) {
      this.#onSample(sample);
      return;
    }
    if (second > this.#newest) {
      for (const held of this.#held) this.#onSample(held);
      this.#held = [];
      this.#newest = second;
    }
    this.#held.push(sample);
  }

  /** Drops the last second's samples; returns that second (epoch s) and how many, or undefined without any. */
  close(): { second: number; samples: number } | undefined {
    const dropped = this.#held.length;
    this.#held = [];
    return dropped > 0 ? { second: this.#newest, samples: dropped } : undefined;
  }
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
