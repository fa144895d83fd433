// The decisive steps run again: a step and its repeat paired, the run's own noise, and
// whether the plateau and the safe limit held.
import type { RepeatPair, RepeatsVerdict, SaturationRow } from '../../contract/index.ts';
import { repeatOf } from '../step-tags.ts';
import { fmt } from './format.ts';

/**
 * The least noise a run is granted, as a share: a step's served rate is a count over one
 * window, whose edges cut requests in flight (a few per hold at these rates), so two runs
 * of a step that agree within 2 % are the same measurement.
 */
export const NOISE_FLOOR = 0.02;

/** What the repeats are judged against. */
export interface RepeatInputs {
  /** The study's first pass: its rate steps in run order, repeats left out. */
  firstPass: SaturationRow[];
  /** The repeats (`r070b`), in run order. */
  repeats: SaturationRow[];
  /** The plateau among the first pass (its index there), or null when none was found. */
  plateau: { index: number } | null;
  /** The safe limit's step among the first pass. */
  safe: SaturationRow | undefined;
  objectives: { p95Ms: number; failRate: number };
  followingShare: number;
}

/**
 * Each repeat beside the step it repeats (its first repeat when there are several). A repeat
 * whose step is not in the first pass (a plan it does not come from) is left out.
 */
export function pairRepeats(firstPass: SaturationRow[], repeats: SaturationRow[]): RepeatPair[] {
  const pairs: RepeatPair[] = [];
  for (const again of repeats) {
    const first = firstPass.find((r) => r.step === repeatOf(again.step));
    if (!first || pairs.some((p) => p.step === first.step)) continue;
    const invalid =
      again.invalid ?? first.invalid ?? (again.dropped > 0 ? `${again.dropped} starts dropped` : null);
    pairs.push({
      step: first.step,
      repeat: again.step,
      offeredPerSec: first.offeredPerSec ?? 0,
      servedPerSec: [first.servedPerSec, again.servedPerSec],
      p95Ms: [first.latencyMs.p95, again.latencyMs.p95],
      failureRate: [first.failureRate, again.failureRate],
      movedShare:
        first.servedPerSec > 0 ? Math.abs(again.servedPerSec - first.servedPerSec) / first.servedPerSec : 0,
      ...(invalid ? { invalid } : {}),
    });
  }
  return pairs;
}

/**
 * The run's own noise, as a share, from what one pass measured twice over: below the
 * plateau, served should equal sent, and the farthest it strayed, |served − sent| ÷ sent, at
 * the valid first-pass steps after the first; past it, every step serves the plateau, and
 * their spread, (most − least) ÷ most served at the valid first-pass steps from the plateau's
 * on, is how far one measure of it is from another. The larger, at least {@link NOISE_FLOOR}.
 */
export function noiseShareOf(firstPass: SaturationRow[], plateauIndex: number | null): number {
  // The first step ramps from nothing: its window starts before its rate does, so what it
  // served and sent differ by how the ramp fell into the window, not by noise.
  const below = (plateauIndex === null ? firstPass : firstPass.slice(0, plateauIndex))
    .slice(1)
    .filter((r) => !r.invalid && r.sentPerSec > 0);
  const strays = below.map((r) => Math.abs(r.servedPerSec - r.sentPerSec) / r.sentPerSec);
  const past = plateauIndex === null ? [] : firstPass.slice(plateauIndex).filter((r) => !r.invalid);
  const most = Math.max(0, ...past.map((r) => r.servedPerSec));
  const spread =
    past.length > 1 && most > 0 ? (most - Math.min(...past.map((r) => r.servedPerSec))) / most : 0;
  return Math.max(NOISE_FLOOR, spread, ...strays);
}

/** Whether a row met the objectives and delivered its load (what the safe limit asks of a step). */
function meetsObjectives(row: SaturationRow, objectives: RepeatInputs['objectives']): boolean {
  return (
    !row.invalid &&
    row.dropped === 0 &&
    row.latencyMs.p95 < objectives.p95Ms &&
    row.failureRate < objectives.failRate
  );
}

const pct = (share: number) => `${fmt(share * 100)}%`;

/**
 * Judges the repeats, or null when the run has none. The plateau is unstable when its step's
 * repeat served more than the noise away from the first run, or when the repeat of the step
 * before it no longer followed what was sent (served under `followingShare` of sent: the
 * plateau came a step early the second time). The safe limit is unstable when its step's
 * repeat missed an objective (p95, failures) or did not follow. A figure whose step was not
 * repeated, or whose repeat is not evidence (invalid, or starts dropped: the service was not
 * given its load), is neither (`stable` null).
 */
export function judgeRepeats(inputs: RepeatInputs): RepeatsVerdict | null {
  const { firstPass, repeats, plateau, safe, objectives, followingShare } = inputs;
  if (repeats.length === 0) return null;
  const pairs = pairRepeats(firstPass, repeats);
  const noiseShare = noiseShareOf(firstPass, plateau?.index ?? null);
  const repeatRow = (step: string | undefined) =>
    step === undefined ? undefined : repeats.find((r) => repeatOf(r.step) === step);
  const follows = (row: SaturationRow) => row.servedPerSec >= followingShare * row.sentPerSec;

  let plateauVerdict: RepeatsVerdict['plateau'];
  if (!plateau) {
    plateauVerdict = { stable: null, words: 'no plateau to repeat' };
  } else {
    const step = firstPass[plateau.index]!;
    const before = plateau.index > 0 ? firstPass[plateau.index - 1] : undefined;
    const pair = pairs.find((p) => p.step === step.step);
    const beforeAgain = repeatRow(before?.step);
    if (!pair) {
      plateauVerdict = { stable: null, words: `the plateau's step ${step.step} was not repeated` };
    } else if (pair.invalid) {
      plateauVerdict = { stable: null, words: `${pair.repeat} is not evidence (${pair.invalid})` };
    } else if (before && beforeAgain && !beforeAgain.invalid && !follows(beforeAgain)) {
      plateauVerdict = {
        stable: false,
        words: `${before.step} followed what was sent and its repeat ${beforeAgain.step} did not (served ${fmt(beforeAgain.servedPerSec)}/s of ${fmt(beforeAgain.sentPerSec)}/s sent): the plateau came a step earlier the second time`,
      };
    } else if (pair.movedShare > noiseShare) {
      plateauVerdict = {
        stable: false,
        words: `served ${fmt(pair.servedPerSec[0])}/s at ${pair.step} and ${fmt(pair.servedPerSec[1])}/s at ${pair.repeat}: it moved ${pct(pair.movedShare)}, more than the run's noise of ${pct(noiseShare)}`,
      };
    } else {
      plateauVerdict = {
        stable: true,
        words: `${pair.step} and ${pair.repeat} served ${fmt(pair.servedPerSec[0])}/s and ${fmt(pair.servedPerSec[1])}/s (${pct(pair.movedShare)} apart, within the run's noise of ${pct(noiseShare)})`,
      };
    }
  }

  let safeVerdict: RepeatsVerdict['safeLimit'];
  const safeAgain = repeatRow(safe?.step);
  if (!safe) {
    safeVerdict = { stable: null, words: 'no safe limit to repeat' };
  } else if (!safeAgain) {
    safeVerdict = { stable: null, words: `the safe limit's step ${safe.step} was not repeated` };
  } else if (safeAgain.invalid || safeAgain.dropped > 0) {
    // Starts dropped: the service was not given that load, so the repeat says nothing of it.
    const why = safeAgain.invalid ?? `${safeAgain.dropped} starts dropped`;
    safeVerdict = { stable: null, words: `${safeAgain.step} is not evidence (${why})` };
  } else if (!meetsObjectives(safeAgain, objectives) || !follows(safeAgain)) {
    const missed = [
      safeAgain.latencyMs.p95 >= objectives.p95Ms
        ? `p95 ${fmt(safeAgain.latencyMs.p95)} ms, over ${fmt(objectives.p95Ms)} ms`
        : null,
      safeAgain.failureRate >= objectives.failRate
        ? `${fmt(safeAgain.failureRate * 100, 2)}% failures, over ${fmt(objectives.failRate * 100, 2)}%`
        : null,
      !follows(safeAgain)
        ? `served ${fmt(safeAgain.servedPerSec)}/s of ${fmt(safeAgain.sentPerSec)}/s sent`
        : null,
    ].filter((w): w is string => w !== null);
    safeVerdict = {
      stable: false,
      words: `${safe.step} met the objectives (p95 ${fmt(safe.latencyMs.p95)} ms, ${fmt(safe.failureRate * 100, 2)}% failures) and its repeat ${safeAgain.step} did not (${missed.join(', ')})`,
    };
  } else {
    safeVerdict = {
      stable: true,
      words: `${safe.step} met the objectives both times (p95 ${fmt(safe.latencyMs.p95)} ms, then ${fmt(safeAgain.latencyMs.p95)} ms)`,
    };
  }

  // The pairs the figures rest on; a repeat of another step (the low one the queue drains
  // in, between the overload and the repeat below the plateau) is only named.
  const decisiveSteps = new Set(
    [
      plateau ? firstPass[plateau.index]?.step : undefined,
      plateau && plateau.index > 0 ? firstPass[plateau.index - 1]?.step : undefined,
      safe?.step,
    ].filter((step): step is string => step !== undefined),
  );
  const shown = decisiveSteps.size > 0 ? pairs.filter((p) => decisiveSteps.has(p.step)) : pairs;
  const others = pairs.filter((p) => !shown.includes(p));
  // The plateau's step by what it served (the capacity, whatever ramped into it); a step below
  // it by the share of what was sent that it served, which a ramp from a lower step changes
  // the rate of but not the share.
  const plateauStep = plateau ? firstPass[plateau.index]?.step : undefined;
  const share = (row: SaturationRow | undefined) =>
    row && row.sentPerSec > 0 ? pct(Math.min(1, row.servedPerSec / row.sentPerSec)) : '?';
  const each = shown.map((p) =>
    p.step === plateauStep
      ? `${p.step} served ${fmt(p.servedPerSec[0])}/s then ${fmt(p.servedPerSec[1])}/s at ${p.repeat} (${pct(p.movedShare)} apart; p95 ${fmt(p.p95Ms[0])} then ${fmt(p.p95Ms[1])} ms)`
      : `${p.step} served ${share(firstPass.find((r) => r.step === p.step))} of what was sent, then ${share(repeats.find((r) => r.step === p.repeat))} at ${p.repeat} (p95 ${fmt(p.p95Ms[0])} then ${fmt(p.p95Ms[1])} ms)`,
  );
  if (others.length > 0)
    each.push(`${others.map((p) => p.repeat).join(', ')} ran between them (not decisive)`);
  const held = (what: string, v: { stable: boolean | null }) =>
    v.stable === true ? `${what} held` : v.stable === false ? `${what} UNSTABLE` : `${what} not judged`;
  const summary = `${each.join('; ')}; noise ${pct(noiseShare)} (served against sent below the plateau, and across the steps past it): ${held('plateau', plateauVerdict)}, ${held('safe limit', safeVerdict)}`;
  return { pairs, noiseShare, plateau: plateauVerdict, safeLimit: safeVerdict, summary };
}
