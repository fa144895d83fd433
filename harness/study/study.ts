// One capacity study end to end: database → service → load → collect → analyse.
import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { cpus, platform, totalmem } from 'node:os';
import { join } from 'node:path';
import { type AnalysisOutput, analyzePath } from '../../analysis/analyze-run.ts';
import { offeredFromTag } from '../../analysis/step-tags.ts';
import { DEFAULT_CRITERIA } from '../../analysis/verdict.ts';
import {
  type EndingReason,
  ERROR_CODES,
  type ErrorCode,
  EXIT_CODES,
  PlateauError,
  RUN_ENDINGS,
  type RunManifest,
  type VuSizing,
} from '../../contract/index.ts';
import { writeFileAtomic } from '../../lib/atomic-write.ts';
import { why } from '../../lib/fs-error-words.ts';
import { PLATEAU_VERSION } from '../../lib/version.ts';
import { type RampPlan, stepAt } from '../../scripts/lib/steps.ts';
import { parseServiceConfig } from '../../target-service/config.ts';
import { buildK6Scripts, PROJECT_ROOT } from '../build-scripts.ts';
import type { Database } from '../db/database.ts';
import { type LoggedChild, stopChild } from './child.ts';
import { DiskWatch, diskFull, finalFilesBytes, SpaceReserve } from './disk-space.ts';
import { findSteps } from './find-steps.ts';
import { GeneratorProbe } from './generator-probe.ts';
import { requireK6For, vetK6Binary } from './k6-binary.ts';
import {
  LiveFigures,
  type LiveSample,
  loadStarted,
  type PlannedNow,
  progressFromSample,
  STARTING_PHASE,
} from './live-figures.ts';
import { freeLoopbackPort, LoadApiClient } from './load-api.ts';
import type { StudyProgress } from './progress-line.ts';
import { requestEnv } from './request-options.ts';
import { createRunDir, lockRunDir, ManifestFile, writeManifest } from './run-dir.ts';
import {
  describeExit,
  type StudyService,
  serviceProcessRecord,
  startStudyService,
} from './service-process.ts';
import { StudyMeters } from './study-meters.ts';
import { type StudyPlan, scriptEntry, scriptEnv } from './study-options.ts';
import { decideEnding, interruptedBy, type PartEnding, type StudyPart, StudyParts } from './study-parts.ts';
import {
  fetchSteps,
  k6CsvMilliseconds,
  loadFailure,
  resetSteps,
  startLoad,
  startReferenceTarget,
} from './target.ts';
import { planVus, resizeAfterDrops, type SizingInputs } from './vu-sizing.ts';

export type { StudyProgress } from './progress-line.ts';

/** How a study ended. */
export interface StudyResult {
  runDir: string;
  /** run.json as the study left it: its status, and `ended` saying why and where. */
  manifest: RunManifest;
  /** The analysis of what was collected, however the study ended (undefined if it could not run). */
  output: AnalysisOutput | undefined;
  /** The ending's exit code (RUN_ENDINGS), or a failed part's own. */
  exitCode: number;
  /**
   * For a study that did not complete (and was not interrupted): what happened, where, and
   * where its data is, for the CLI to print; its exitCode is the result's.
   */
  failure?: PlateauError;
  /** Earlier runs of this study that dropped starts and were rerun with more VUs. */
  rerunFrom: string[];
}

/** Reruns a study may make after drops, each with at least twice the VUs. */
const MAX_RERUNS = 2;

/** What VU sizing knows of a plan. */
export function sizingInputs(plan: StudyPlan): SizingInputs {
  return {
    ratesPerSec: plan.steps,
    holdSeconds: plan.holdSeconds,
    recoveryRatePerSec: plan.recoveryRatePerSec,
    jitterSeconds: plan.jitterSeconds,
    timeoutSeconds: plan.timeoutSeconds,
    service: plan.target ? undefined : parseServiceConfig(plan.service).config,
  };
}

/**
 * Runs a study. VUs are sized from the plan (planVus); when a run drops starts although
 * the generator kept up, it is rerun (up to twice) with VUs sized from what it measured,
 * into a new run directory that names the one it repeats (`rerunOf`). The result is the
 * last run's, however it ended (its `failure` says why when it did not complete); only a
 * run directory that cannot be made, or has no room, rejects (a PlateauError, exit 104).
 */
export async function runStudy(
  plan: StudyPlan,
  options: { signal?: AbortSignal; onProgress?: (p: StudyProgress) => void } = {},
): Promise<StudyResult> {
  const progress = options.onProgress ?? (() => undefined);
  // A k6 that is missing, not executable or too old is named before anything starts.
  if (plan.engine === 'k6') vetK6Binary(plan.k6Bin);
  let vus = planVus(sizingInputs(plan));
  let result = await runOnce(plan, vus, options, null);
  // A rerun runs the steps the first run ran (a probe's placement included), without probing again.
  const ran: StudyPlan = { ...result.plan, find: null };
  const inputs = sizingInputs(ran);
  vus = result.vus;
  const rerunFrom: string[] = [];
  for (let attempt = 0; attempt < MAX_RERUNS; attempt++) {
    const analysis = result.output?.analysis;
    // A closed-model sweep has a VU per client: nothing to resize.
    if (plan.model === 'closed') break;
    if (result.manifest.status !== 'completed' || !analysis || options.signal?.aborted) break;
    const next = resizeAfterDrops(vus, analysis, inputs);
    if (!next) break;
    const droppedAt = analysis.table.filter((r) => r.dropped > 0).map((r) => `${r.step} ${r.dropped}`);
    progress({
      phase: 'rerunning with more VUs',
      notice: `run ${result.manifest.id} dropped starts (${droppedAt.join(', ')}) with ${vus.preAllocatedVUs} VUs: those rows are not evidence; rerunning with ${next.preAllocatedVUs} pre-allocated VUs`,
    });
    const rerun = await runOnce(ran, next, options, result.manifest.id);
    result.manifest.rerunAs = rerun.manifest.id;
    await writeManifest(result.runDir, result.manifest);
    rerunFrom.push(result.manifest.id);
    result = rerun;
    vus = next;
  }
  const { plan: _ran, vus: _vus, ...ended } = result;
  return { ...ended, rerunFrom };
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

/** `k6 version`'s first line, or 'unknown' when the binary does not answer. */
function k6Version(bin: string): string {
  try {
    const out = execFileSync(bin, ['version'], {
      encoding: 'utf8',
      timeout: 5000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return out.split('\n')[0]?.trim() || 'unknown';
  } catch {
    return 'unknown';
  }
}

/** One run of a study while it runs: its directory, its run.json, the parts it started. */
interface RunInProgress {
  /** The plan; a probe replaces it with the steps it placed (`--find`) or the repeats it chose. */
  plan: StudyPlan;
  /** The VUs of its study (sized again for the steps a probe placed). */
  vus: VuSizing;
  dir: string;
  manifest: RunManifest;
  file: ManifestFile;
  parts: StudyParts;
  /** Room kept on the disk for the final files. */
  reserve: SpaceReserve;
  unlock: () => Promise<void>;
  progress: (p: StudyProgress) => void;
}

/**
 * Runs a study once with `vus`, into a run directory of its own. However it ends (the load
 * ran its plan, a signal, the service, its database or the generator died, the disk filled,
 * a part did not start) it ends through {@link endStudy}: everything stops, what was
 * collected is analysed, and run.json says how it ended. Only a run directory that cannot be
 * made (or has no room) throws.
 */
async function runOnce(
  plan: StudyPlan,
  vus: VuSizing,
  options: { signal?: AbortSignal; onProgress?: (p: StudyProgress) => void },
  rerunOf: string | null,
): Promise<Omit<StudyResult, 'rerunFrom'> & { plan: StudyPlan; vus: VuSizing }> {
  const run = await openRun(plan, vus, rerunOf, options.onProgress ?? (() => undefined));
  let first: PartEnding;
  let error: PlateauError | undefined;
  try {
    first = await startParts(run, options.signal);
  } catch (thrown) {
    error =
      thrown instanceof PlateauError
        ? thrown
        : new PlateauError(ERROR_CODES.CHILD_FAILED, String((thrown as Error)?.message ?? thrown), {
            cause: thrown,
          });
    first =
      options.signal?.aborted || error.code === ERROR_CODES.INTERRUPTED
        ? interruptedBy(options.signal)
        : { reason: 'failed', detail: error.message, ...(error.hint ? { hint: error.hint } : {}) };
  }
  // Where the load was when it ended: the live figures may move on while the parts stop.
  return { ...(await endStudy(run, first, run.manifest.reachedStep, error)), plan: run.plan, vus: run.vus };
}

/**
 * The one way a study ends. Looks at the disk before giving back the room kept for the
 * final files, stops every part (the load, the meters, the server side, the service, the
 * database), decides the ending from everything that happened (decideEnding), writes
 * run.json's final status and `ended`, analyses what was collected and removes the lock.
 * The result's exit code is the ending's (RUN_ENDINGS), and `failure` says, for a run that
 * did not complete, what happened and where the data is.
 */
async function endStudy(
  run: RunInProgress,
  first: PartEnding,
  atStep: string | null,
  error: PlateauError | undefined,
): Promise<Omit<StudyResult, 'rerunFrom'>> {
  const { dir, manifest } = run;
  const full = await diskFull(dir);
  await run.reserve.release();
  const problems = await run.parts.stopAll();
  const ending = decideEnding([first, full, ...run.parts.endings]);
  manifest.status = RUN_ENDINGS[ending.reason].status;
  manifest.endedAt = new Date().toISOString();
  manifest.reachedStep = atStep;
  manifest.ended = { reason: ending.reason, detail: ending.detail, atStep };
  manifest.warnings.push(...problems, ...(manifest.status === 'failed' ? [ending.detail] : []));
  const unsaved = await run.file.save(manifest).then(
    () => undefined,
    (e: unknown) =>
      new PlateauError(ERROR_CODES.INPUT, `run.json could not be written: ${why(e)}`, { cause: e }),
  );
  let output: AnalysisOutput | undefined;
  let analysisError: PlateauError | undefined;
  try {
    output = await analyzePath(dir);
  } catch (e) {
    analysisError = e as PlateauError;
  }
  if (manifest.meters && output?.resources) {
    // run.json lists what the meters showed, beside how each source fared.
    manifest.meters.resources = output.resources.resources.map(({ name, kind, role, family, source }) => ({
      name,
      kind,
      role,
      family,
      source,
    }));
    await run.file.save(manifest).catch(() => undefined);
  }
  await run.unlock().catch(() => undefined);
  const failure =
    endingFailure(ending, atStep, dir, { error, analysisError, unsaved }) ?? unsaved ?? analysisError;
  return {
    runDir: dir,
    manifest,
    output,
    exitCode: failure?.exitCode ?? RUN_ENDINGS[ending.reason].exitCode,
    ...(failure ? { failure } : {}),
  };
}

/** The error code of each ending that is a failure of the study (contract/errors.ts). */
const ENDING_ERRORS: Partial<Record<EndingReason, ErrorCode>> = {
  'service-died': ERROR_CODES.SERVICE_DIED,
  'database-died': ERROR_CODES.DATABASE_DIED,
  'generator-died': ERROR_CODES.GENERATOR_DIED,
  'disk-full': ERROR_CODES.DISK_FULL,
  failed: ERROR_CODES.CHILD_FAILED,
};

/**
 * What a user reads when a study did not complete: what happened and where, and where what
 * it collected is. Undefined for a completed or interrupted study (the CLI says the latter).
 * A part that did not start keeps its own error (and its exit code, 104 for a bad script).
 */
function endingFailure(
  ending: PartEnding,
  atStep: string | null,
  dir: string,
  after: {
    /** What stopped a part from starting. */
    error: PlateauError | undefined;
    analysisError: PlateauError | undefined;
    /** Why run.json's final status could not be written. */
    unsaved: PlateauError | undefined;
  },
): PlateauError | undefined {
  const code = ENDING_ERRORS[ending.reason];
  if (!code) return undefined;
  if (ending.reason === 'failed' && after.error) return after.error;
  const where = atStep ? ` during ${atStep}` : ' before the load began';
  const kept = after.analysisError
    ? `what was collected is kept in ${dir}, but could not be analysed: ${after.analysisError.message}`
    : `what was collected is kept and analysed in ${dir} (record.txt says which rows stand)`;
  const lines = [ending.hint, kept, after.unsaved?.message].filter((line) => line !== undefined);
  return new PlateauError(code, `${ending.detail}${where}: the run did not complete`, {
    hint: lines.join('\n'),
  });
}

/**
 * Makes the run directory and what it holds before anything starts: its lock, the room kept
 * for the final files, and run.json saying `running`. A disk without room is refused here,
 * and the empty directory removed.
 */
async function openRun(
  plan: StudyPlan,
  vus: VuSizing,
  rerunOf: string | null,
  progress: (p: StudyProgress) => void,
): Promise<RunInProgress> {
  const { id, dir } = await createRunDir(plan.out);
  const unlock = await lockRunDir(dir);
  let reserve: SpaceReserve;
  try {
    reserve = await SpaceReserve.take(dir, plan.out, finalFilesBytes(plannedSeconds(plan)));
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const manifest = newManifest(plan, vus, id, rerunOf);
  const file = new ManifestFile(dir);
  await file.save(manifest);
  return { plan, vus, dir, manifest, file, parts: new StudyParts(), reserve, unlock, progress };
}

/**
 * Starts the study's parts in order (the script bundled first, then the database, the
 * service, the meters, the disk watch, the load), each added to `run.parts` as it starts,
 * and resolves with the first ending: the load's plan done, a part that died, the signal.
 * A part that cannot start throws; what had started is stopped by the caller's endStudy.
 */
async function startParts(run: RunInProgress, signal?: AbortSignal): Promise<PartEnding> {
  const { dir, manifest, parts, progress } = run;
  let plan = run.plan;
  // Bundled first: a script that does not build, or needs a newer k6, fails before the
  // database and the service start.
  progress({ phase: 'bundling the k6 script' });
  const [script] = await buildK6Scripts({ outDir: join(dir, 'script'), entries: [scriptEntry(plan.script)] });
  if (plan.engine === 'k6') requireK6For(script!.imports, manifest.engine.version);
  if (plan.find && !script!.usesStudy && !['capacity', 'concurrency'].includes(plan.script)) {
    // A script with options of its own takes no steps: the probe could not drive it.
    if (plan.sources['--find']?.source !== 'default' || plan.sources['--repeat-decisive'])
      throw PlateauError.invalidConfig([
        {
          setting: '--script',
          message: `${plan.script} does not import 'plateau/k6', so plateau cannot give it steps (a probe's, or repeats)`,
          hint: 'export const options = studyOptions() and tag requests with tagged() from \'plateau/k6\' (docs/capacity-study.md, "Your own script"), or drop --find and --repeat-decisive',
        },
      ]);
    plan = { ...plan, find: null };
    run.plan = plan;
    delete manifest.config['--find'];
    delete manifest.config['--budget'];
  }
  // A body given as text goes into the run directory: both engines read it with open().
  const body = plan.request.body;
  const bodyFile = body && 'text' in body ? join(dir, 'request-body') : undefined;
  if (bodyFile && body && 'text' in body) await writeFileAtomic(bodyFile, body.text);

  let url = plan.target;
  let databaseUrl = monitoringUrl(plan.db);
  if (!plan.target) {
    const target = await startReferenceTarget({
      db: plan.db,
      service: plan.service,
      dir,
      progress: (phase) => progress({ phase }),
    });
    manifest.database = target.database.info;
    url = target.url;
    databaseUrl = target.database.url;
    parts.add(databasePart(target.database, () => target.stop()));
    parts.add(referenceServicePart(target.service));
  } else if (plan.serviceProcess) {
    // The user's service from plateau.config, started after the database plateau opens for it, if any.
    manifest.serviceProcess = serviceProcessRecord(plan.serviceProcess);
    for (const key of plan.serviceProcess.added)
      manifest.warnings.push(`--set ${key}: not in the env of the config's service, added to it`);
    const own = await startStudyService(plan.serviceProcess, {
      db: plan.db,
      dir,
      progress,
      ...(signal ? { signal } : {}),
    });
    manifest.database = own.database?.info ?? null;
    if (own.database) parts.add(databasePart(own.database, () => own.stop().then(() => undefined)));
    parts.add(ownServicePart(own));
  }
  // Reset the server-side buckets so they hold this run only (a service without /steps is fine).
  await resetSteps(url!);
  const hasSteps = (await fetchSteps(url!)) !== undefined;
  if (hasSteps) parts.add(serverSidePart(url!, dir, progress));
  // The service's published meters and PostgreSQL's own views, read from here to the end of
  // the load (a Prometheus server over the same window when they stop).
  const meters = new StudyMeters(plan.meters, dir, databaseUrl);
  meters.start();
  parts.add({
    name: 'meter sources',
    stop: async () => {
      manifest.meters = { sources: await meters.stop(), declared: plan.meters.declared };
    },
  });
  if (!hasSteps && !meters.any)
    manifest.warnings.push(
      `${url} does not answer GET /steps and no meters were given (--metrics, --prometheus): the analysis will be client-side only`,
    );
  await run.file.save(manifest);
  parts.add(new DiskWatch(dir));
  const poolMax = plan.target ? null : parseServiceConfig(plan.service).config.poolMax;
  if (plan.find) {
    const criteria = DEFAULT_CRITERIA;
    const found = await findSteps({
      plan,
      manifest,
      saveManifest: () => run.file.save(manifest),
      parts,
      dir,
      url: url!,
      hasSteps,
      poolMax: poolMax ?? (hasSteps ? ((await fetchSteps(url!))?.settings.poolMax ?? null) : null),
      script: script!.outFile,
      env: { ...scriptEnv(plan, url!, run.vus), ...requestEnv(plan.request, bodyFile) },
      csvMilliseconds: k6CsvMilliseconds(manifest.engine.version),
      criteria: {
        p95Ms: plan.p95Ms,
        failRate: plan.failRate,
        followingShare: criteria.followingShare,
        poolSaturatedPct: criteria.poolSaturatedPct,
      },
      signal,
      progress,
    });
    if ('ending' in found) return found.ending;
    run.plan = found.plan;
    run.vus = planVus(sizingInputs(found.plan));
    manifest.load.vus = run.vus;
    await run.file.save(manifest);
  }
  await startLoadPart(run, { url: url!, script: script!.outFile, bodyFile, vus: run.vus, hasSteps });
  return parts.first(signal);
}

/**
 * Starts the load (`plateau engine run` or `k6 run`, its REST API on a free port), the live
 * figures that follow it each second (the progress line, run.json's `reachedStep` as each
 * step begins) and the probe of the generator's CPU, as one part: its plan done is the
 * `completed` ending, its death `generator-died`.
 */
async function startLoadPart(
  run: RunInProgress,
  load: { url: string; script: string; bodyFile: string | undefined; vus: VuSizing; hasSteps: boolean },
): Promise<void> {
  const { plan, dir, manifest, progress } = run;
  // Said before the spawn, not from the first live sample: a generator that reports its
  // scenarios running within that first second would otherwise skip the line.
  progress({ phase: STARTING_PHASE });
  const apiPort = await freeLoopbackPort();
  const started = startLoad({
    engine: plan.engine,
    k6Bin: plan.k6Bin,
    script: load.script,
    env: { ...scriptEnv(plan, load.url, load.vus), ...requestEnv(plan.request, load.bodyFile) },
    csv: join(dir, 'k6.csv.gz'),
    summary: join(dir, 'summary.json'),
    dir,
    csvMilliseconds: k6CsvMilliseconds(manifest.engine.version),
    address: `127.0.0.1:${apiPort}`,
    ...(plan.workers !== undefined ? { workers: plan.workers } : {}),
  });
  const child = started.child;
  const probe =
    child.child.pid !== undefined
      ? new GeneratorProbe(child.child.pid, plan.engine, {
          ...(plan.workers ? { workers: plan.workers } : {}),
        }).start()
      : undefined;
  const spawnedMs = Date.now();
  const poolMax = plan.target ? null : parseServiceConfig(plan.service).config.poolMax;
  const live = new LiveFigures({
    serviceUrl: load.hasSteps ? load.url : undefined,
    load: new LoadApiClient(`http://127.0.0.1:${apiPort}`),
  });
  live.start((sample) => {
    if (!loadStarted(sample)) return progress({ phase: STARTING_PHASE });
    const now = plannedNow(plan, sample, spawnedMs, poolMax);
    if (now.step !== undefined && now.step !== manifest.reachedStep) {
      // Each step is in run.json as it begins: a run whose plateau was killed says how far it got.
      manifest.reachedStep = now.step;
      void run.file.save(manifest).catch(() => undefined);
    }
    progress(progressFromSample(sample, now));
  });
  const engine = plan.engine === 'k6' ? 'k6' : 'the load engine';
  run.parts.add({
    name: 'load engine',
    ended: child.exited.then((code): PartEnding => {
      manifest.exitCode = code;
      if (code === EXIT_CODES.ok || code === EXIT_CODES.thresholdsFailed)
        return { reason: 'completed', detail: 'the load ran to its end' };
      const failure = loadFailure(plan.engine, started.command, code, child);
      const how =
        code === 127
          ? failure.message
          : code === EXIT_CODES.interrupted
            ? `${engine} was stopped before its plan ended (exit ${code}: interrupted)`
            : code === EXIT_CODES.outputFailed
              ? `${engine} stopped: its output file could not be written (exit ${code})`
              : `${engine} died (${exitWords(child, code)})`;
      return {
        reason: 'generator-died',
        detail: how,
        hint: `engine.log ends with:\n${child.tail() || '(nothing)'}`,
      };
    }),
    stop: async () => {
      live.stop();
      manifest.exitCode = await stopChild(child, 'SIGINT', 20_000);
      if (probe) await writeFileAtomic(join(dir, 'generator.json'), `${JSON.stringify(probe.stop())}\n`);
    },
  });
}

/** `killed by SIGKILL` or `exit code 3`, for a child that has exited with `code`. */
function exitWords(child: LoggedChild, code: number): string {
  const signal = child.child.signalCode;
  return signal ? `killed by ${signal}` : `exit code ${code}`;
}

/** The database plateau started, as a part: its death ends the study; `stop` stops it (and what runs on it). */
function databasePart(database: Database, stop: () => Promise<void>): StudyPart {
  return {
    name: 'database',
    ...(database.death
      ? {
          ended: database.death.then(
            (death): PartEnding => ({
              reason: 'database-died',
              detail: `the embedded PostgreSQL died (${death.how})`,
              hint: `its log ends with:\n${death.logTail.split('\n').slice(-4).join('\n')}`,
            }),
          ),
        }
      : {}),
    stop,
  };
}

/** The reference service (`plateau serve`), as a part. */
function referenceServicePart(service: LoggedChild): StudyPart {
  return {
    name: 'statement service',
    ended: service.exited.then(
      (code): PartEnding => ({
        reason: 'service-died',
        detail: `the statement service died (${exitWords(service, code)})`,
        hint: `service.log ends with:\n${service.tail()}`,
      }),
    ),
    stop: async () => void (await stopChild(service)),
  };
}

/** The user's service from plateau.config, as a part. */
function ownServicePart(own: StudyService): StudyPart {
  return {
    name: 'service',
    ended: own.service.exited.then((exit): PartEnding => {
      const death = own.service.death();
      return {
        reason: 'service-died',
        detail:
          death?.message ??
          `your service \`${own.service.command}\` ended during the study (${describeExit(exit)})`,
        ...(death?.hint ? { hint: death.hint } : {}),
      };
    }),
    stop: async () => void (await own.service.stop()),
  };
}

/** GET /steps after the load, into server.json: stopped after the load, before the service. */
function serverSidePart(url: string, dir: string, progress: (p: StudyProgress) => void): StudyPart {
  return {
    name: 'server side',
    stop: async () => {
      progress({ phase: 'collecting the server side' });
      const report = await fetchSteps(url);
      if (report) await writeFileAtomic(join(dir, 'server.json'), `${JSON.stringify(report, null, 2)}\n`);
    },
  };
}

/** How long the plan runs, s: its steps (or levels of clients) and the recovery after them. */
function plannedSeconds(plan: StudyPlan): number {
  // A study that places its own steps takes its budget, probe and all.
  if (plan.find?.placeSteps) return plan.find.budgetSeconds;
  const levels = plan.model === 'closed' ? plan.vusLevels.length : plan.steps.length;
  return levels * plan.holdSeconds + plan.recoverySeconds;
}

/** run.json as a study begins: its plan, versions and machine, `running`. */
function newManifest(plan: StudyPlan, vus: VuSizing, id: string, rerunOf: string | null): RunManifest {
  const serviceConfig = parseServiceConfig(plan.service).config;
  return {
    kind: 'plateau.run',
    schemaVersion: 2,
    id,
    status: 'running',
    startedAt: new Date().toISOString(),
    endedAt: null,
    config: plan.sources,
    load: {
      script: plan.script,
      model: plan.model,
      timeoutSeconds: plan.timeoutSeconds,
      ...(plan.model === 'closed'
        ? { vusLevels: plan.vusLevels, retries: plan.retries, recoveryVus: plan.recoveryVus }
        : {}),
      stepsPerSec: plan.model === 'closed' ? [] : plan.steps,
      holdSeconds: plan.holdSeconds,
      rampSeconds: plan.rampSeconds,
      recoveryRatePerSec: plan.recoveryRatePerSec,
      recoverySeconds: plan.recoverySeconds,
      jitterSeconds: plan.jitterSeconds,
      p95Ms: plan.p95Ms,
      failRate: plan.failRate,
      vus,
    },
    service: plan.target
      ? null
      : {
          POOL_MAX: serviceConfig.poolMax,
          QUERY_MS: serviceConfig.queryMs,
          PAYLOAD_KB: serviceConfig.payloadKb,
          RENDER_FIRST: serviceConfig.renderFirst,
          DEADLINES: serviceConfig.deadlines,
          SHED: serviceConfig.shed,
          QUEUE_MAX: serviceConfig.queueMax,
          ACQUIRE_TIMEOUT_MS: serviceConfig.acquireTimeoutMs,
          CPU_MS: serviceConfig.cpuMs,
          ADMISSION: serviceConfig.admission,
          ...(serviceConfig.admission
            ? {
                ADMISSION_SIGNAL: serviceConfig.admissionSignal,
                ...(serviceConfig.admissionSignal === 'delay'
                  ? {
                      ADMISSION_HIGH_MS: serviceConfig.admissionHighMs,
                      ADMISSION_LOW_MS: serviceConfig.admissionLowMs,
                    }
                  : {
                      ADMISSION_HIGH_PCT: serviceConfig.admissionHighPct,
                      ADMISSION_LOW_PCT: serviceConfig.admissionLowPct,
                    }),
                ADMISSION_SAMPLE_MS: serviceConfig.admissionSampleMs,
              }
            : {}),
        },
    target: plan.target ?? 'reference statement service',
    engine: {
      name: plan.engine,
      version: plan.engine === 'embedded' ? 'plateau-embedded' : k6Version(plan.k6Bin),
      ...(plan.workers !== undefined ? { workers: plan.workers } : {}),
    },
    database: null,
    versions: { node: process.version, plateau: PLATEAU_VERSION, gitCommit: gitCommit() },
    machine: { cpus: cpus().length, memoryMb: Math.round(totalmem() / 1_048_576), platform: platform() },
    reachedStep: null,
    exitCode: null,
    warnings: [],
    rerunOf,
    rerunAs: null,
    request: plan.request,
    ...(plan.placed ? { find: plan.placed } : {}),
  };
}

/** The database URL a user's own study may monitor: `--db` or DATABASE_URL when it is a postgres:// URL. */
function monitoringUrl(db: string): string | null {
  return /^postgres(ql)?:\/\//.test(db) ? db : null;
}

/**
 * Where the plan is now: the step the service last reported (else the plan's step for the
 * time since the generator started its scenarios, else since it was spawned), its target
 * rate (the recovery rate for `drain` and `recovery`), and the seconds left.
 */
export function plannedNow(
  plan: StudyPlan,
  sample: LiveSample,
  spawnedMs: number,
  poolMax: number | null,
  nowMs = Date.now(),
): PlannedNow {
  const ramp: RampPlan = {
    ratesPerSec: plan.steps,
    holdSeconds: plan.holdSeconds,
    rampSeconds: plan.rampSeconds,
    recoveryRatePerSec: plan.recoveryRatePerSec,
    recoverySeconds: plan.recoverySeconds,
  };
  const elapsedSeconds = (nowMs - (sample.runningSinceMs ?? spawnedMs)) / 1000;
  if (plan.model === 'closed') {
    // Levels of clients: no offered rate; the step tag (c008) names the clients.
    const total =
      plan.vusLevels.length * plan.holdSeconds + (plan.recoveryVus > 0 ? plan.recoverySeconds : 0);
    const index = Math.min(
      plan.vusLevels.length - 1,
      Math.floor(Math.max(0, elapsedSeconds) / plan.holdSeconds),
    );
    return {
      step:
        sample.server?.last?.step ??
        sample.server?.step ??
        `c${String(plan.vusLevels[index]).padStart(3, '0')}`,
      secondsLeft: Math.max(0, Math.round(total - elapsedSeconds)),
      poolMax: plan.target ? null : poolMax,
    };
  }
  const totalSeconds = plan.steps.length * plan.holdSeconds + plan.recoverySeconds;
  const step = sample.server?.last?.step ?? sample.server?.step ?? stepAt(elapsedSeconds, ramp);
  return {
    step,
    offeredPerSec: offeredFromTag(step) ?? plan.recoveryRatePerSec,
    secondsLeft: Math.max(0, Math.round(totalSeconds - elapsedSeconds)),
    poolMax: plan.target ? null : poolMax,
  };
}
