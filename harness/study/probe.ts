// The breakpoint probe of `plateau run --find`: the study's own script at rates doubling
// from 2/s, a few seconds each, tagged p002, p004, …; each step judged as it ends from what
// the study already reads live (the service's /steps/live, the generator's REST API and CPU),
// stopped at the first sign of the knee, or the generator's limit.
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import {
  EXIT_CODES,
  type LoadPlan,
  type ProbeReport,
  type ProbeStep,
  type TimelinePoint,
  type VuSizing,
} from '../../contract/index.ts';
import { writeFileAtomic } from '../../lib/atomic-write.ts';
import { stepTags } from '../../scripts/lib/steps.ts';
import { type LoggedChild, stopChild } from './child.ts';
import { GeneratorProbe } from './generator-probe.ts';
import {
  LiveFigures,
  type LiveSample,
  loadStarted,
  progressFromSample,
  STARTING_PHASE,
} from './live-figures.ts';
import { freeLoopbackPort, LoadApiClient } from './load-api.ts';
import {
  nextProbeMove,
  type ProbeCriteria,
  type ProbeStepData,
  probeKnee,
  probeSigns,
  summarizeProbeStep,
} from './probe-judge.ts';
import type { StudyProgress } from './progress-line.ts';
import type { ProbePlan } from './step-placement.ts';
import type { PartEnding, StudyPart } from './study-parts.ts';
import { startLoad } from './target.ts';

/** The probe's file in the run directory. */
export const PROBE_FILE = 'probe.json';

/**
 * What the probe's generator writes under the study's own names while it runs (so a study
 * that ends during the probe is analysed from them), and where they go once it is done.
 */
export const PROBE_FILES: readonly [string, string][] = [
  ['k6.csv.gz', 'probe.csv.gz'],
  ['summary.json', 'probe-summary.json'],
  ['generator.json', 'probe-generator.json'],
  ['engine.log', 'probe-engine.log'],
];

/**
 * How long after a step's end by the plan it is judged when the service labels no seconds,
 * ms: the generator's last readings of it are in (the plan's clock is a poll early or late).
 */
const JUDGE_DELAY_MS = 1600;
/** The probe's recovery after its last step, s: long enough for that step to be judged while the generator still answers. */
const PROBE_RECOVERY_SECONDS = 4;
/**
 * The probe's VUs: enough for 100 requests in flight at once from the start (a slow service
 * at tens per second, a fast one at thousands), growing to 1,000 as the generator needs.
 */
export const PROBE_VUS: VuSizing = {
  preAllocatedVUs: 100,
  maxVUs: 1000,
  basis: 'the probe: 100 pre-allocated, up to 1000 (rates double from 2/s until the knee shows)',
};

/** What the probe needs to run the study's script against its service. */
export interface ProbeOptions {
  plan: ProbePlan;
  engine: 'embedded' | 'k6';
  k6Bin: string;
  /** The embedded engine's workers (`--workers`), or undefined for one process. */
  workers: number | undefined;
  /** The bundled script and the -e settings of the study (the probe's steps are laid over them). */
  script: string;
  env: Record<string, string>;
  dir: string;
  csvMilliseconds: boolean;
  /** The service's URL when it answers `/steps/live` (then served, shed, p95 and its pool are the service's). */
  liveUrl: string | undefined;
  poolMax: number | null;
  criteria: ProbeCriteria;
  progress: (p: StudyProgress) => void;
  /** Called as each probe step begins, with its tag (run.json's `reachedStep`). */
  onStep: (step: string) => void;
  /** The study's signal: a probe stopped while it is aborted was interrupted, else the study failed around it. */
  signal?: AbortSignal;
}

/** A running probe. */
export interface ProbeRun {
  /** Resolves with the report once the probe stopped by itself: a knee, the generator's limit, its plan done. */
  done: Promise<ProbeReport>;
  /** The probe as a part of the study: its generator's death ends the study; `stop` stops it and keeps what it saw. */
  part: StudyPart;
  /** When its generator was started (the budget's clock), ms. */
  startedMs: number;
}

/** The -e settings of the probe: the study's script at the probe's rates, tagged `p…`, with its own VUs. */
export function probeEnv(base: Record<string, string>, plan: ProbePlan): Record<string, string> {
  return {
    ...base,
    STEPS: plan.ratesPerSec.join(','),
    STEP_PREFIX: 'p',
    HOLD: String(plan.holdSeconds),
    RAMP: String(plan.rampSeconds),
    RECOVERY_RATE: String(plan.ratesPerSec[0] ?? 1),
    RECOVERY: String(PROBE_RECOVERY_SECONDS),
    // The probe looks for the knee, not for clustering: even arrivals.
    JITTER: '0',
    PREALLOCATED_VUS: String(PROBE_VUS.preAllocatedVUs),
    MAX_VUS: String(PROBE_VUS.maxVUs),
  };
}

/** The probe's plan as run.json's load plan (what a study that ends during the probe is analysed by). */
export function probeLoad(
  plan: ProbePlan,
): Pick<
  LoadPlan,
  'stepsPerSec' | 'holdSeconds' | 'rampSeconds' | 'recoveryRatePerSec' | 'recoverySeconds' | 'jitterSeconds'
> & { vus: VuSizing } {
  return {
    stepsPerSec: plan.ratesPerSec,
    holdSeconds: plan.holdSeconds,
    rampSeconds: plan.rampSeconds,
    recoveryRatePerSec: plan.ratesPerSec[0] ?? 1,
    recoverySeconds: PROBE_RECOVERY_SECONDS,
    jitterSeconds: 0,
    vus: PROBE_VUS,
  };
}

/**
 * Moves the probe's files to their probe names (PROBE_FILES), for the study's generator to
 * write its own; a file the probe did not write is passed over.
 */
export async function moveProbeFiles(dir: string): Promise<void> {
  for (const [from, to] of PROBE_FILES) await rename(join(dir, from), join(dir, to)).catch(() => undefined);
}

/**
 * Starts the probe. Each second it reads both sides (LiveFigures); as each step ends
 * (JUDGE_DELAY_MS later) it reads the step's p95 and failure share from the generator and
 * judges it (probe-judge.ts); on a stop it stops the generator (SIGINT) and writes
 * probe.json. Its files stay under the study's names (a study that ends here is analysed
 * from them) until {@link moveProbeFiles}. A study that ends while it runs stops it through
 * `part.stop`, and probe.json says so.
 */
export async function startProbe(options: ProbeOptions): Promise<ProbeRun> {
  const { plan, dir } = options;
  const tags = stepTags(plan.ratesPerSec, 'p');
  const apiPort = await freeLoopbackPort();
  const api = new LoadApiClient(`http://127.0.0.1:${apiPort}`);
  const started = startLoad({
    engine: options.engine,
    k6Bin: options.k6Bin,
    script: options.script,
    env: probeEnv(options.env, plan),
    csv: join(dir, 'k6.csv.gz'),
    summary: join(dir, 'summary.json'),
    dir,
    csvMilliseconds: options.csvMilliseconds,
    address: `127.0.0.1:${apiPort}`,
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
  });
  const child: LoggedChild = started.child;
  const startedMs = Date.now();
  const generator =
    child.child.pid !== undefined
      ? new GeneratorProbe(child.child.pid, options.engine, {
          ...(options.workers ? { workers: options.workers } : {}),
        }).start()
      : undefined;
  const live = new LiveFigures({ serviceUrl: options.liveUrl, load: api });
  const serverSeconds = new Map<number, TimelinePoint>();
  const loadSeconds: { atMs: number; completedPerSec: number; droppedPerSec: number }[] = [];
  const saturatedAt: { atMs: number; total: number }[] = [];
  const steps: ProbeStep[] = [];
  let runningSinceMs: number | undefined;
  let judging = false;
  let finished: ProbeReport | undefined;
  let stoppedByUs = false;
  let resolveDone: (report: ProbeReport) => void = () => undefined;
  const done = new Promise<ProbeReport>((resolve) => {
    resolveDone = resolve;
  });
  const holdMs = plan.holdSeconds * 1000;

  const report = (stop: ProbeReport['stop']): ProbeReport => ({
    kind: 'plateau.probe',
    schemaVersion: 1,
    plan: { ratesPerSec: plan.ratesPerSec, holdSeconds: plan.holdSeconds, rampSeconds: plan.rampSeconds },
    steps: [...steps],
    stop,
    ...probeKnee(steps),
  });

  /** Stops the generator and keeps what it saw. */
  const finish = async (stop: ProbeReport['stop']): Promise<ProbeReport> => {
    if (finished) return finished;
    const result = report(stop);
    finished = result;
    live.stop();
    stoppedByUs = true;
    await stopChild(child, 'SIGINT', 20_000);
    if (generator)
      await writeFileAtomic(join(dir, 'generator.json'), `${JSON.stringify(generator.stop())}\n`);
    await writeFileAtomic(join(dir, PROBE_FILE), `${JSON.stringify(result, null, 2)}\n`);
    return result;
  };

  /**
   * The probe step index `ms` (harness clock) fell in: the label of the service's second
   * there when it has one (the service saw the step's first request, so its labels follow the
   * generator's own clock), else the plan laid on when the generator was first seen running
   * (up to a poll early or late). -1 before the first step.
   */
  const stepIndexAt = (ms: number): number => {
    const label = serverSeconds.get(Math.floor(ms / 1000))?.step;
    const labelled = label ? tags.indexOf(label) : -1;
    if (labelled >= 0) return labelled;
    if (label === 'drain' || label === 'recovery') return tags.length;
    if (runningSinceMs === undefined || ms < runningSinceMs) return -1;
    return Math.min(tags.length, Math.floor((ms - runningSinceMs) / holdMs));
  };

  const judge = async (index: number): Promise<void> => {
    const tag = tags[index]!;
    const client = await api.stepFigures(tag);
    // The service's count of requests that found every limit full, before and by the step's end.
    const total = (upTo: number) =>
      saturatedAt.filter((s) => stepIndexAt(s.atMs - 500) <= upTo).at(-1)?.total;
    const before = index === 0 ? 0 : total(index - 1);
    const by = total(index);
    const data: ProbeStepData = {
      step: tag,
      offeredPerSec: plan.ratesPerSec[index]!,
      rampSeconds: plan.rampSeconds,
      serverSeconds: [...serverSeconds.values()].filter((s) => s.step === tag).sort((a, b) => a.t - b.t),
      // A reading covers the second before it.
      loadSeconds: loadSeconds
        .filter((s) => stepIndexAt(s.atMs - 500) === index)
        .map(({ completedPerSec, droppedPerSec }) => ({ completedPerSec, droppedPerSec })),
      generatorCpuPct: (generator?.seconds() ?? [])
        .filter((s) => stepIndexAt(s.t * 1000 + 500) === index)
        .map((s) => s.usablePct),
      client: client.p95Ms === null && client.failureRate === null ? null : client,
      saturatedDelta: before !== undefined && by !== undefined ? by - before : null,
      poolMax: options.poolMax,
    };
    const summary = summarizeProbeStep(data);
    steps.push({ ...summary, signs: probeSigns(summary, options.criteria) });
    const move = nextProbeMove(steps, tags.length, plan.cutByBudget);
    if (move.stop) resolveDone(await finish({ reason: move.reason, atStep: tag, words: move.words }));
  };

  live.start((sample: LiveSample) => {
    if (finished) return;
    if (!loadStarted(sample)) return options.progress({ phase: `probe: ${STARTING_PHASE}` });
    const now = Date.now();
    runningSinceMs ??= sample.runningSinceMs ?? now;
    const last = sample.server?.last;
    if (last) serverSeconds.set(last.t, last);
    if (sample.server?.saturated !== undefined)
      saturatedAt.push({ atMs: now, total: sample.server.saturated });
    if (sample.load)
      loadSeconds.push({
        atMs: now,
        completedPerSec: sample.load.sentPerSec,
        droppedPerSec: sample.load.droppedPerSec,
      });
    // The step now: the service's current one when it says, else the plan's.
    const current = sample.server?.step ? tags.indexOf(sample.server.step) : -1;
    const index = Math.min(tags.length - 1, Math.max(0, current >= 0 ? current : stepIndexAt(now)));
    options.onStep(tags[index]!);
    const total = tags.length * holdMs;
    options.progress(
      progressFromSample(sample, {
        step: tags[index]!,
        offeredPerSec: plan.ratesPerSec[index]!,
        secondsLeft: Math.max(0, Math.round((runningSinceMs + total - now) / 1000)),
        poolMax: options.poolMax,
      }),
    );
    // Judge each step once it is over, one at a time: the service's newest closed second
    // belongs to a later step (so every second of this one has been read), or, without the
    // service's labels, the plan says it ended a moment ago.
    const due = steps.length;
    const closed = last ? stepIndexAt(last.t * 1000) : -1;
    const over =
      closed > due || now >= runningSinceMs + (due + 1) * holdMs + JUDGE_DELAY_MS + (last ? holdMs : 0);
    if (!judging && due < tags.length && over) {
      judging = true;
      void judge(due).finally(() => {
        judging = false;
      });
    }
  });

  const engineName = options.engine === 'k6' ? 'k6' : 'the load engine';
  const part: StudyPart = {
    name: 'probe',
    // Its generator dying ends the study; its plan ending, or the stop the probe itself sent, does not.
    ended: new Promise<PartEnding>((resolve) => {
      void child.exited.then((code) => {
        if (stoppedByUs) return;
        if (code === EXIT_CODES.ok || code === EXIT_CODES.thresholdsFailed) {
          // The plan ran out before a stop: judge what it has (the last steps' REST figures are gone).
          void finish({
            reason: steps.some((s) => s.signs.length > 0) ? 'knee' : plan.cutByBudget ? 'budget' : 'end',
            atStep: steps.at(-1)?.step ?? null,
            words: `the probe's plan ended at ${steps.at(-1)?.step ?? 'its start'}`,
          }).then(resolveDone);
          return;
        }
        resolve({
          reason: 'generator-died',
          detail: `${engineName} of the probe died (exit code ${code})`,
          hint: `engine.log ends with:\n${child.tail() || '(nothing)'}`,
        });
      });
    }),
    stop: async () => {
      const interrupted = options.signal?.aborted === true;
      await finish({
        reason: interrupted ? 'interrupted' : 'failed',
        atStep: steps.at(-1)?.step ?? null,
        words: interrupted ? 'interrupted while the probe ran' : 'the study ended while the probe ran',
      });
    },
  };
  return { done, part, startedMs };
}
