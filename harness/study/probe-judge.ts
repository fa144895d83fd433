// The breakpoint probe's judgement, pure: one step's live figures → its signs of the knee,
// and after each step whether to go on. harness/study/probe.ts feeds it as the probe runs.
import type {
  ProbeSign,
  ProbeStep,
  ProbeStopReason,
  TimelinePoint,
  VerdictCriteria,
} from '../../contract/index.ts';

/** What the probe gathered while one step ran. */
export interface ProbeStepData {
  step: string;
  offeredPerSec: number;
  /** How long the rate ramps from the step before's at the step's start, s. */
  rampSeconds: number;
  /** The service's closed seconds labelled with this step, oldest first (`GET /steps/live`); [] without it. */
  serverSeconds: TimelinePoint[];
  /**
   * The generator's readings that fell in the step, oldest first: responses completed per
   * second (its `http_reqs`) and starts dropped per second.
   */
  loadSeconds: { completedPerSec: number; droppedPerSec: number }[];
  /** The generator's CPU in the step's seconds, % of the cores it can use. */
  generatorCpuPct: number[];
  /** The step's own figures from the generator (its trend and rate for the step's tag), when it has them. */
  client: { p95Ms: number | null; failureRate: number | null } | null;
  /** How many more requests found the service's every limit full by the step's end (its own count). */
  saturatedDelta: number | null;
  /** The service's pool size, when known (the reference service, or its `GET /steps` settings). */
  poolMax: number | null;
}

/** What the probe's signs are judged against: the study's objectives and the verdict's criteria. */
export interface ProbeCriteria {
  p95Ms: number;
  failRate: number;
  followingShare: VerdictCriteria['followingShare'];
  poolSaturatedPct: VerdictCriteria['poolSaturatedPct'];
}

/** A generator busier than this share of the cores it can use is at its own limit, %. */
export const GENERATOR_LIMIT_PCT = 90;
/** Starts dropped beyond this share of what was offered are a sign (a few drop while VUs grow). */
const DROPPED_SIGN_SHARE = 0.05;
/**
 * Requests served must fall short of those sent by at least this many for served to count
 * as falling below sent: at 2/s a second holds 1 or 3 completions by where they land, and one
 * request short is 25 % of a two-second step.
 */
const SERVED_SHORT_REQUESTS = 3;
/** A first step whose requests failed at least this share: the service fails from the first request. */
const FAILING_SHARE = 0.5;

const mean = (xs: number[]) => (xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const rate = (x: number) => `${x >= 100 ? Math.round(x) : Math.round(x * 10) / 10}/s`;
const round1 = (x: number) => Math.round(x * 10) / 10;

/**
 * The seconds of a step that are judged: those that cannot hold any of the ramp from the step
 * before, as many as there are. The step begins somewhere in its first second, so a ramp of
 * `rampSeconds` can reach 1 + ⌈rampSeconds⌉ seconds in: with the step beginning late in its
 * first second, a 1 s ramp fills most of the second after, whose served is then ~75 % of the
 * step's rate on a service that keeps up (a false knee, seen on an idle machine).
 */
function settled<T>(seconds: T[], rampSeconds: number): T[] {
  const ramping = 1 + Math.ceil(rampSeconds);
  return seconds.length > ramping ? seconds.slice(ramping) : seconds.slice(-1);
}

/**
 * One step's figures from what the probe gathered. Served is the service's 2xx per second
 * when it answers `/steps/live`, else the client's completions less the step's failure share;
 * sent is what was offered less what the generator dropped; p95 the client's for the step's
 * requests, else the service's busiest second. Signs are left to {@link probeSigns}.
 */
export function summarizeProbeStep(data: ProbeStepData): Omit<ProbeStep, 'signs'> {
  const server = settled(data.serverSeconds, data.rampSeconds);
  const load = settled(data.loadSeconds, data.rampSeconds);
  const dropped = mean(load.map((s) => s.droppedPerSec));
  const failureRate = data.client?.failureRate ?? null;
  const served =
    server.length > 0
      ? mean(server.map((s) => s.served))
      : load.length > 0
        ? mean(load.map((s) => s.completedPerSec))! * (1 - (failureRate ?? 0))
        : null;
  const serverP95s = server.map((s) => s.handlerP95Ms).filter((p): p is number => typeof p === 'number');
  const clientP95 = data.client?.p95Ms ?? null;
  const p95 = clientP95 ?? (serverP95s.length > 0 ? Math.max(...serverP95s) : null);
  const checkedOut = mean(server.map((s) => s.checkedOutMean));
  const waiting = mean(server.map((s) => s.waitingMean));
  return {
    step: data.step,
    offeredPerSec: data.offeredPerSec,
    // The seconds served was counted over, by which probeSigns weighs its shortfall: the
    // generator's readings do not fall on the service's seconds, and a step of two settled
    // seconds of the service can hold three of them.
    seconds: server.length > 0 ? server.length : load.length,
    sentPerSec: load.length > 0 ? round1(Math.max(0, data.offeredPerSec - dropped!)) : null,
    servedPerSec: served === null ? null : round1(served),
    servedSource: server.length > 0 ? 'server' : served === null ? null : 'client',
    p95Ms: p95 === null ? null : round1(p95),
    p95Source: clientP95 !== null ? 'client' : p95 === null ? null : 'server',
    failureRate,
    shedPerSec: server.length > 0 ? round1(mean(server.map((s) => s.shed))!) : null,
    droppedPerSec: dropped === null ? null : round1(dropped),
    pool:
      data.poolMax && checkedOut !== null && waiting !== null
        ? { checkedOutPct: round1((checkedOut / data.poolMax) * 100), waitingMean: round1(waiting) }
        : null,
    saturated: data.saturatedDelta,
    generatorCpuPct: data.generatorCpuPct.length > 0 ? round1(Math.max(...data.generatorCpuPct)) : null,
  };
}

/** Whether the generator was at its own limit during the step (its CPU). */
export function generatorLimited(step: Omit<ProbeStep, 'signs'>): boolean {
  return (step.generatorCpuPct ?? 0) >= GENERATOR_LIMIT_PCT;
}

/**
 * The signs of the knee a step showed, the service's first: served below the plateau rule's
 * share of what was sent (by at least three requests over the step); p95 at or over the objective; failures at or over the budget (the
 * service's sheds when the generator has no failure rate); a full resource (the pool at the
 * verdict's saturation share with callers waiting, or requests that found every limit full);
 * starts dropped although the generator kept up. A generator at its own limit delays its
 * requests and slows their clock, so its p95 and drops are not the service's sign.
 */
export function probeSigns(step: Omit<ProbeStep, 'signs'>, criteria: ProbeCriteria): ProbeSign[] {
  const signs: ProbeSign[] = [];
  const sent = step.sentPerSec;
  const busyGenerator = generatorLimited(step);
  if (
    sent !== null &&
    sent > 0 &&
    step.servedPerSec !== null &&
    step.servedPerSec < criteria.followingShare * sent &&
    (sent - step.servedPerSec) * step.seconds >= SERVED_SHORT_REQUESTS
  )
    signs.push({ kind: 'served', words: `served ${rate(step.servedPerSec)} of ${rate(sent)} sent` });
  if (!busyGenerator && step.p95Ms !== null && step.p95Ms >= criteria.p95Ms)
    signs.push({
      kind: 'p95',
      words: `p95 ${Math.round(step.p95Ms)} ms, at or over the ${criteria.p95Ms} ms objective`,
    });
  const failing = step.failureRate ?? (sent && step.shedPerSec !== null ? step.shedPerSec / sent : null);
  if (failing !== null && failing >= criteria.failRate)
    signs.push({
      kind: 'failures',
      words: `${round1(failing * 100)}% failed, at or over the ${round1(criteria.failRate * 100)}% budget`,
    });
  if (step.pool && step.pool.checkedOutPct >= criteria.poolSaturatedPct && step.pool.waitingMean >= 1)
    signs.push({
      kind: 'saturated',
      words: `pool ${Math.round(step.pool.checkedOutPct)}% checked out, ${step.pool.waitingMean} waiting`,
    });
  else if (
    step.saturated !== null &&
    step.saturated > Math.max(1, criteria.failRate * step.offeredPerSec * step.seconds)
  )
    signs.push({ kind: 'saturated', words: `${step.saturated} requests found every limit full` });
  if (
    !busyGenerator &&
    step.droppedPerSec !== null &&
    step.droppedPerSec > DROPPED_SIGN_SHARE * step.offeredPerSec
  )
    signs.push({
      kind: 'dropped',
      words: `${rate(step.droppedPerSec)} starts dropped with the generator at ${Math.round(step.generatorCpuPct ?? 0)}% CPU: every VU waited on the service`,
    });
  return signs;
}

/** Whether to go on after the steps judged so far, or why the probe stops. */
export type ProbeMove = { stop: false } | { stop: true; reason: ProbeStopReason; words: string };

/**
 * After each step: stop one step past where served first fell below sent, which measures
 * what the service holds past its knee a second time; after another first sign, one step
 * past it when served still followed there (else on, past the fall); at the sign itself when
 * half its requests failed or the generator is at its own limit there. Also stop when the
 * generator reached its own limit before the service showed a sign, when the very first step
 * failed half its requests (the service fails from the first request), or when the plan is
 * done (`budget` when the budget cut it short, `end` when its top rate ran).
 */
export function nextProbeMove(steps: ProbeStep[], planned: number, cutByBudget: boolean): ProbeMove {
  const last = steps.at(-1);
  if (!last) return { stop: false };
  const failingShare = last.failureRate ?? (last.servedPerSec === 0 && (last.sentPerSec ?? 0) > 0 ? 1 : 0);
  if (steps.length === 1 && failingShare >= FAILING_SHARE)
    return {
      stop: true,
      reason: 'failing',
      words: `the service failed from the first request: ${Math.round(failingShare * 100)}% of ${last.step}'s requests at ${rate(last.offeredPerSec)} failed`,
    };
  const first = steps.find((s) => s.signs.length > 0);
  const fell = steps.find((s) => s.signs.some((x) => x.kind === 'served'));
  const signWords = (step: ProbeStep) => step.signs.map((s) => s.words).join(', ');
  const servedWords = (step: ProbeStep) =>
    step.signs.find((s) => s.kind === 'served')?.words ?? 'served still followed';
  if (fell && fell !== last)
    return {
      stop: true,
      reason: 'knee',
      words: `stopped at ${last.step}, a step past where served first fell below sent (${fell.step}: ${servedWords(fell)}${first && first !== fell ? `; the first sign at ${first.step}: ${signWords(first)}` : ''}); ${servedWords(last)} there`,
    };
  if (first && !fell && first !== last)
    return {
      stop: true,
      reason: 'knee',
      words: `stopped at ${last.step}, a step past the first sign at ${first.step} (${signWords(first)}); served still followed there`,
    };
  if (first && failingShare >= FAILING_SHARE)
    return { stop: true, reason: 'knee', words: `stopped at ${last.step}: ${signWords(last)}` };
  if (first && generatorLimited(last))
    return {
      stop: true,
      reason: 'knee',
      words: `stopped at ${last.step}: ${signWords(last)}, with the generator at its own limit (no step past it)`,
    };
  if (!first && generatorLimited(last))
    return {
      stop: true,
      reason: 'generator',
      words: `the load generator reached its own limit at ${last.step} (CPU ${Math.round(last.generatorCpuPct ?? 0)}% of the cores it can use) before the service showed a sign of a knee: the service served ${rate(last.servedPerSec ?? 0)} and its limit is above what this generator can send`,
    };
  if (steps.length >= planned) {
    const top = rate(last.offeredPerSec);
    return cutByBudget
      ? {
          stop: true,
          reason: first ? 'knee' : 'budget',
          words: first
            ? `the probe's share of the budget ended at ${last.step}, the first sign of the knee (${signWords(first)})`
            : `no sign of a knee up to ${top} within the probe's share of the budget`,
        }
      : {
          stop: true,
          reason: first ? 'knee' : 'end',
          words: first
            ? `stopped at ${last.step}, the probe's last step (${signWords(first)})`
            : `no sign of a knee up to ${top}, the probe's top rate`,
        };
  }
  return { stop: false };
}

/**
 * Where the probe saw the knee: the plateau, the most the service served at any step where
 * served fell below sent (null when it never did), and the rate the steps are placed around:
 * that plateau, else the first sign's offered rate (null when no step showed one).
 */
export function probeKnee(steps: ProbeStep[]): {
  firstSign: { step: string; offeredPerSec: number } | null;
  plateauPerSec: number | null;
  kneePerSec: number | null;
} {
  const first = steps.find((s) => s.signs.length > 0);
  const fell = steps.filter((s) => s.signs.some((x) => x.kind === 'served') && s.servedPerSec !== null);
  const plateauPerSec = fell.length > 0 ? Math.max(...fell.map((s) => s.servedPerSec!)) : null;
  return {
    firstSign: first ? { step: first.step, offeredPerSec: first.offeredPerSec } : null,
    plateauPerSec,
    kneePerSec: plateauPerSec ?? first?.offeredPerSec ?? null,
  };
}
