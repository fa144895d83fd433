// Each step's window of time on the client's clock, from when its requests were sent.
import { offeredFromTag, planIndexOfTag } from './step-tags.ts';

/** When a step's requests were sent, estimated from its samples (stamp − duration). */
export interface StepSends {
  key: string;
  /** Earliest and latest estimated send time, epoch s. */
  sendMinS: number;
  sendMaxS: number;
}

/** The stepped plan the client ran, when the run directory says (run.json). */
export interface WindowPlan {
  /** Each step's rate in run order (a repeated rate is a repeat, analysis/step-tags.ts). */
  ratesPerSec: readonly number[];
  holdSeconds: number;
  recoverySeconds: number;
  /** Seconds after the ramp tagged `drain`. */
  drainSeconds: number;
}

/** A step's window on the client's clock, [startS, endS). */
export interface StepWindowSpan {
  startS: number;
  endS: number;
}

/** The windows of every step, and how they were found. */
export interface StepWindows {
  spans: Map<string, StepWindowSpan>;
  /** `plan`: the run's plan laid on its start, found from the tags; `tags`: tag to tag. */
  basis: 'plan' | 'tags';
  /** The start of the load on the client's clock when the plan placed it, epoch s. */
  startS: number | null;
  notes: string[];
}

/** How far (s) the tags may stray from the plan before the plan is not trusted. */
const PLAN_SLACK_SECONDS = 0.5;

/**
 * The window of each step. A request's step tag says when it was sent, and a send time is
 * known to within the stamps' resolution `resolutionS` (true send ∈ [estimate, estimate +
 * resolution)). With the plan, step k covers [t0 + k·hold, t0 + (k+1)·hold), so every
 * step's sends bound the start t0:
 *
 *   sendMax_k − (k+1)·hold < t0 ≤ sendMin_k + resolution − k·hold
 *
 * and the windows are laid from the middle of the tightest bounds. Without a plan (or when
 * the tags do not fit it), each boundary lies between one step's last send and the next
 * step's first, and is put in the middle of the two.
 */
export function stepWindows(
  sends: readonly StepSends[],
  resolutionS: number,
  plan: WindowPlan | undefined,
): StepWindows {
  const notes: string[] = [];
  if (plan) {
    const placed = windowsFromPlan(sends, resolutionS, plan);
    if (placed) return { ...placed, basis: 'plan', notes };
    notes.push(
      "the step tags do not fit the run's plan of steps (its hold lengths): windows were placed from tag to tag",
    );
  }
  const ordered = [...sends].sort((a, b) => a.sendMinS - b.sendMinS);
  const spans = new Map<string, StepWindowSpan>();
  let overlapping = 0;
  for (let i = 0; i < ordered.length; i++) {
    const step = ordered[i]!;
    const previous = ordered[i - 1];
    const next = ordered[i + 1];
    const start = previous ? spans.get(previous.key)!.endS : step.sendMinS;
    let end = step.sendMaxS + resolutionS;
    if (next) {
      const lo = step.sendMaxS;
      const hi = next.sendMinS + resolutionS;
      if (lo > hi) overlapping++;
      end = lo <= hi ? (lo + hi) / 2 : (step.sendMaxS + next.sendMinS) / 2;
    }
    spans.set(step.key, { startS: start, endS: Math.max(start, end) });
  }
  if (overlapping > 0) {
    notes.push(
      `${overlapping} step${overlapping === 1 ? '' : 's'} sent requests after the next step had begun: their windows are approximate`,
    );
  }
  return { spans, basis: 'tags', startS: null, notes };
}

function windowsFromPlan(
  sends: readonly StepSends[],
  resolutionS: number,
  plan: WindowPlan,
): Omit<StepWindows, 'basis' | 'notes'> | undefined {
  const hold = plan.holdSeconds;
  const rampEnd = plan.ratesPerSec.length * hold;
  const drain = Math.min(plan.drainSeconds, plan.recoverySeconds);
  const phase = (key: string): [number, number] | undefined => {
    if (offeredFromTag(key) !== null) {
      // A repeat (`r040b`) is the rate's second run in the plan, not its first.
      const k = planIndexOfTag(key, plan.ratesPerSec);
      return k < 0 ? undefined : [k * hold, (k + 1) * hold];
    }
    if (key === 'drain') return [rampEnd, rampEnd + drain];
    if (key === 'recovery') return [rampEnd + drain, rampEnd + plan.recoverySeconds];
    return undefined;
  };
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  const placed: [string, [number, number]][] = [];
  for (const step of sends) {
    const span = phase(step.key);
    if (!span) continue;
    placed.push([step.key, span]);
    // A rate step's last sends bound the start from below; the phases after the ramp do
    // not: with jittered arrivals the last iterations read their tag up to a jitter late.
    if (offeredFromTag(step.key) !== null) lo = Math.max(lo, step.sendMaxS - span[1]);
    hi = Math.min(hi, step.sendMinS + resolutionS - span[0]);
  }
  if (placed.length === 0 || lo - hi > PLAN_SLACK_SECONDS) return undefined;
  const t0 = (lo + hi) / 2;
  const spans = new Map<string, StepWindowSpan>();
  for (const [key, [from, to]] of placed) spans.set(key, { startS: t0 + from, endS: t0 + to });
  return { spans, startS: t0 };
}
