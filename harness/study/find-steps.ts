// A study's steps found by a probe (`plateau run --find`), or its given steps' decisive
// ones repeated (`--repeat-decisive`): the probe runs against the study's service, the steps
// are placed (or chosen) from what it saw, and run.json and the plan say so.
import { ERROR_CODES, PlateauError, type ProbeReport, type RunManifest } from '../../contract/index.ts';
import { formatDuration } from '../../scripts/lib/settings.ts';
import { stepSequenceProblem, stepTags } from '../../scripts/lib/steps.ts';
import { fetchLive } from './live-figures.ts';
import { moveProbeFiles, type ProbeRun, probeLoad, startProbe } from './probe.ts';
import type { ProbeCriteria } from './probe-judge.ts';
import type { StudyProgress } from './progress-line.ts';
import {
  findingWords,
  type PlacedSteps,
  PROBE_BUDGET_SHARE,
  placeSteps,
  planProbe,
  predictDecisive,
  STARTUP_ALLOWANCE_SECONDS,
  withRepeats,
} from './step-placement.ts';
import type { StudyPlan } from './study-options.ts';
import { interruptedBy, type PartEnding, type StudyParts } from './study-parts.ts';
import { resetSteps } from './target.ts';

/** The longest the service is given to finish the probe's last requests before the study, ms. */
const SETTLE_MS = 15_000;

/** What the probe runs with: the study's parts, files and service. */
export interface FindContext {
  plan: StudyPlan;
  manifest: RunManifest;
  saveManifest: () => Promise<void>;
  parts: StudyParts;
  dir: string;
  /** The service's URL. */
  url: string;
  /** Whether it answers `/steps/live` (then the probe reads its served, shed, p95 and pool). */
  hasSteps: boolean;
  poolMax: number | null;
  script: string;
  /** The study's -e settings (scriptEnv and the request's), which the probe's steps override. */
  env: Record<string, string>;
  csvMilliseconds: boolean;
  criteria: ProbeCriteria;
  signal: AbortSignal | undefined;
  progress: (p: StudyProgress) => void;
}

/** Where the study goes after the probe: on, with its plan, or ended by what happened meanwhile. */
export type FindOutcome = { plan: StudyPlan } | { ending: PartEnding };

/**
 * Runs the probe as a part of the study and decides the steps. While it runs, run.json's load
 * is the probe's (a study that ends here is analysed from the probe's steps); once it stops,
 * its files take their probe names, the service's step buckets are reset once its last
 * requests are done, and run.json and the returned plan hold the placed steps. A probe that
 * could not place them (the generator's limit first, a service failing from the first
 * request, a budget that ran out) throws a PlateauError (NO_KNEE) whose hint is the way out;
 * its files stay the run's, analysed as far as they go. With given steps the probe only
 * chooses the repeats, and the study runs whatever it saw.
 */
export async function findSteps(context: FindContext): Promise<FindOutcome> {
  const { plan, manifest, dir } = context;
  const find = plan.find!;
  const probePlan = planProbe(find.budgetSeconds);
  manifest.load = { ...manifest.load, ...probeLoad(probePlan) };
  const probeTags = stepTags(probePlan.ratesPerSec, 'p');
  manifest.find = {
    placedBy: find.placeSteps ? 'probe' : 'given',
    budgetSeconds: find.placeSteps ? find.budgetSeconds : null,
    probe: {
      ratesPerSec: probePlan.ratesPerSec,
      holdSeconds: probePlan.holdSeconds,
      stop: 'interrupted',
      atStep: null,
      kneePerSec: null,
    },
    repeated: [],
    how: `a probe (${probeTags[0]}, doubling every ${probePlan.holdSeconds} s) was running`,
  };
  await context.saveManifest();
  context.progress({
    phase: 'probing the service',
    notice: `probe: the rate doubles from ${probePlan.ratesPerSec[0]}/s every ${probePlan.holdSeconds} s until the first sign of the knee${find.placeSteps ? `; probe and study within ${formatDuration(find.budgetSeconds)}` : ''}`,
  });
  const probe: ProbeRun = await startProbe({
    plan: probePlan,
    engine: plan.engine,
    k6Bin: plan.k6Bin,
    workers: plan.workers,
    script: context.script,
    env: context.env,
    dir,
    csvMilliseconds: context.csvMilliseconds,
    liveUrl: context.hasSteps ? context.url : undefined,
    poolMax: context.poolMax,
    criteria: context.criteria,
    progress: context.progress,
    onStep: (step) => {
      if (step === manifest.reachedStep) return;
      manifest.reachedStep = step;
      void context.saveManifest().catch(() => undefined);
    },
    ...(context.signal ? { signal: context.signal } : {}),
  });
  context.parts.add(probe.part);
  const first = await Promise.race([
    probe.done.then((report) => ({ report })),
    context.parts.first(context.signal).then((ending) => ({ ending })),
  ]);
  if ('ending' in first) return first;
  const report = first.report;
  manifest.find.probe = {
    ...manifest.find.probe,
    stop: report.stop.reason,
    atStep: report.stop.atStep,
    kneePerSec: report.kneePerSec,
  };
  context.progress({ phase: 'placing the steps', notice: `probe: ${report.stop.words}` });

  let next: StudyPlan;
  let decisive: { below: number | null; plateau: number | null };
  if (find.placeSteps) {
    const placed = placeFromProbe(report, find, context, probe.startedMs);
    decisive = find.repeat ? placed.decisive : { below: null, plateau: null };
    next = {
      ...plan,
      steps: placed.sequence,
      holdSeconds: placed.holdSeconds,
      rampSeconds: placed.rampSeconds,
      recoverySeconds: placed.recoverySeconds,
      recoveryRatePerSec: placed.recoveryRatePerSec,
    };
    manifest.find.how = findingWords({
      placedBy: 'probe',
      probeTags: report.steps.map((s) => s.step),
      probeHoldSeconds: probePlan.holdSeconds,
      stopWords: report.stop.words,
      kneePerSec: report.kneePerSec!,
      firstPass: placed.firstPass,
      sequence: placed.sequence,
      decisive,
    });
  } else {
    const given = repeatGiven(plan.steps, report, context.criteria.followingShare);
    decisive = given.decisive;
    next = { ...plan, steps: given.sequence };
    manifest.find.how =
      report.kneePerSec === null
        ? `given (${plan.steps.join(', ')}/s); a probe (${probeSpan(report)}; ${report.stop.words}) saw no knee, so no step is run again`
        : findingWords({
            placedBy: 'given',
            probeTags: report.steps.map((s) => s.step),
            probeHoldSeconds: probePlan.holdSeconds,
            stopWords: report.stop.words,
            kneePerSec: report.kneePerSec,
            firstPass: plan.steps,
            sequence: given.sequence,
            decisive,
          });
  }
  manifest.find.repeated = decisiveTags(next.steps, decisive);
  next.placed = manifest.find;
  // The probe's last requests are the service's business until they are done; then its
  // buckets are emptied, so that server.json holds the study alone.
  await settle(context);
  // Interrupted meanwhile: the probe stays the run's client side, analysed as far as it went.
  if (context.signal?.aborted) return { ending: interruptedBy(context.signal) };
  await moveProbeFiles(dir);
  await resetSteps(context.url);
  // run.json's settings say what ran: the placed steps and holds (their sources as planned).
  const ran: [string, string | number][] = [
    ['--steps', next.steps.join(',')],
    ['--hold', next.holdSeconds],
    ['--ramp', next.rampSeconds],
    ['--recovery', next.recoverySeconds],
    ['--recovery-rate', next.recoveryRatePerSec],
  ];
  for (const [flag, value] of ran) {
    const entry = manifest.config[flag];
    if (entry) entry.value = value;
  }
  manifest.load = {
    ...manifest.load,
    stepsPerSec: next.steps,
    holdSeconds: next.holdSeconds,
    rampSeconds: next.rampSeconds,
    recoveryRatePerSec: next.recoveryRatePerSec,
    recoverySeconds: next.recoverySeconds,
    jitterSeconds: next.jitterSeconds,
  };
  manifest.reachedStep = null;
  await context.saveManifest();
  context.progress({ phase: 'placing the steps', notice: `steps: ${manifest.find.how}` });
  return { plan: next };
}

/** `p002–p064`: the probe's steps that ran. */
function probeSpan(report: ProbeReport): string {
  const tags = report.steps.map((s) => s.step);
  return tags.length > 1 ? `${tags[0]}–${tags.at(-1)}` : (tags[0] ?? 'no step');
}

/** The tags of the decisive steps a sequence runs again (`r070` for a later `r070b`), in run order. */
export function decisiveTags(
  sequence: readonly number[],
  decisive: { below: number | null; plateau: number | null },
): string[] {
  const tags = stepTags(sequence);
  return tags.filter(
    (tag, i) =>
      (sequence[i] === decisive.below || sequence[i] === decisive.plateau) && tags.includes(`${tag}b`),
  );
}

/**
 * The steps placed from the probe's knee in what the budget has left, or the error that says
 * why they cannot be: the probe saw no knee (the generator's limit, a failing service, the
 * budget), or what is left of the budget holds not even the short layout.
 */
function placeFromProbe(
  report: ProbeReport,
  find: NonNullable<StudyPlan['find']>,
  context: FindContext,
  startedMs: number,
): PlacedSteps {
  const { plan } = context;
  if (report.kneePerSec === null || report.stop.reason === 'failing' || report.stop.reason === 'generator') {
    const top = report.steps.at(-1);
    const hints: Record<string, string> = {
      generator: `the generator is the limit here, not the service: give it more cores (${plan.engine === 'embedded' ? `more engine workers, --workers ${plan.workers === undefined ? 'auto' : `above ${plan.workers}`} on a machine with the cores for them` : 'real k6 on a machine with more cores'}; or execution segments over several machines, plateau testrun), or study the service below ${top?.offeredPerSec ?? 'that'}/s with --steps`,
      failing: `see service.log${plan.target ? ` and ${plan.target}` : ''}: a service that fails every request has no capacity to find; fix it, check the request (--endpoint, --method, --expect-status), then run again`,
      budget: `give a larger --budget (the probe takes up to ${Math.round(PROBE_BUDGET_SHARE * 100)}% of it), or --steps`,
      end: 'give --steps above that rate',
    };
    throw new PlateauError(ERROR_CODES.NO_KNEE, `the probe could not place the steps: ${report.stop.words}`, {
      hint: `${hints[report.stop.reason] ?? 'give --steps'}\nthe probe's steps are kept and analysed in ${context.dir} (probe.json says what each showed)`,
    });
  }
  const leftSeconds = (startedMs + find.budgetSeconds * 1000 - Date.now()) / 1000 - STARTUP_ALLOWANCE_SECONDS;
  const placed = placeSteps({
    kneePerSec: report.kneePerSec,
    leftSeconds,
    repeat: find.repeat,
    followingShare: context.criteria.followingShare,
    given: find.given,
  });
  if ('neededSeconds' in placed) {
    throw new PlateauError(
      ERROR_CODES.NO_KNEE,
      `the probe found the knee near ${report.kneePerSec}/s, but what is left of --budget ${formatDuration(find.budgetSeconds)} (${placed.leftSeconds} s) does not hold the smallest study around it (${Math.ceil(placed.neededSeconds)} s)`,
      {
        hint: `give --budget ${formatDuration(Math.ceil((find.budgetSeconds + placed.neededSeconds - placed.leftSeconds) / 10) * 10)} or more${find.given.holdSeconds !== undefined ? ', or a shorter --hold' : ''}; or --steps around ${Math.round(report.kneePerSec)}/s`,
      },
    );
  }
  return placed;
}

/**
 * The given steps with their decisive ones repeated, as the probe's knee predicts them; as
 * given when the probe saw no knee, or the steps already repeat some of their own.
 */
export function repeatGiven(
  steps: number[],
  report: ProbeReport,
  followingShare: number,
): { sequence: number[]; decisive: { below: number | null; plateau: number | null } } {
  const none = { sequence: steps, decisive: { below: null, plateau: null } };
  if (report.kneePerSec === null) return none;
  if (new Set(steps).size < steps.length || stepSequenceProblem(steps) !== undefined) return none;
  const decisive = predictDecisive(steps, report.kneePerSec, followingShare);
  return { sequence: withRepeats(steps, decisive), decisive };
}

/**
 * Waits until the service has finished the probe's requests (nothing checked out, nobody
 * waiting, by `/steps/live`), at most SETTLE_MS; a service without it is given 2 s.
 */
async function settle(context: FindContext): Promise<void> {
  const until = Date.now() + (context.hasSteps ? SETTLE_MS : 2000);
  while (Date.now() < until && !context.signal?.aborted) {
    if (context.hasSteps) {
      const live = await fetchLive(context.url);
      if (live === 'absent' || (live && live.checkedOut === 0 && live.waiting === 0)) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
