// One capacity study end to end: database → service → load → collect → analyse.
import { execFileSync } from 'node:child_process';
import { cpus, platform, totalmem } from 'node:os';
import { join } from 'node:path';
import { type AnalysisOutput, analyzePath } from '../../analysis/analyze-run.ts';
import { offeredFromTag } from '../../analysis/step-tags.ts';
import {
  ERROR_CODES,
  EXIT_CODES,
  LOAD_FINISHED_CODES,
  PlateauError,
  type RunManifest,
  type VuSizing,
} from '../../contract/index.ts';
import { writeFileAtomic } from '../../lib/atomic-write.ts';
import { PLATEAU_VERSION } from '../../lib/version.ts';
import { type RampPlan, stepAt } from '../../scripts/lib/steps.ts';
import { parseServiceConfig } from '../../target-service/config.ts';
import { buildK6Scripts, PROJECT_ROOT } from '../build-scripts.ts';
import { type LoggedChild, stopChild } from './child.ts';
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
import { createRunDir, writeManifest } from './run-dir.ts';
import { type StudyService, serviceProcessRecord, startStudyService } from './service-process.ts';
import { StudyMeters } from './study-meters.ts';
import { type StudyPlan, scriptEntry, scriptEnv } from './study-options.ts';
import {
  fetchSteps,
  k6CsvMilliseconds,
  loadFailure,
  type ReferenceTarget,
  resetSteps,
  startLoad,
  startReferenceTarget,
} from './target.ts';
import { planVus, resizeAfterDrops, type SizingInputs } from './vu-sizing.ts';

export type { StudyProgress } from './progress-line.ts';

/** How a study ended. */
export interface StudyResult {
  runDir: string;
  manifest: RunManifest;
  output: AnalysisOutput | undefined;
  /** 0 when a verdict was produced; the engine's code otherwise. */
  exitCode: number;
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
 * last run's.
 */
export async function runStudy(
  plan: StudyPlan,
  options: { signal?: AbortSignal; onProgress?: (p: StudyProgress) => void } = {},
): Promise<StudyResult> {
  const progress = options.onProgress ?? (() => undefined);
  // A k6 that is missing, not executable or too old is named before anything starts.
  if (plan.engine === 'k6') vetK6Binary(plan.k6Bin);
  const inputs = sizingInputs(plan);
  let vus = planVus(inputs);
  let result = await runOnce(plan, vus, options, null);
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
    const rerun = await runOnce(plan, next, options, result.manifest.id);
    result.manifest.rerunAs = rerun.manifest.id;
    await writeManifest(result.runDir, result.manifest);
    rerunFrom.push(result.manifest.id);
    result = rerun;
    vus = next;
  }
  return { ...result, rerunFrom };
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

/**
 * Runs a study once with `vus`. Resources stop in reverse order (engine, service, database)
 * on success, failure and signals; everything gathered is written to the run directory,
 * which is marked `interrupted` when `signal` aborts. The analysis runs on whatever was
 * collected.
 */
async function runOnce(
  plan: StudyPlan,
  vus: VuSizing,
  options: { signal?: AbortSignal; onProgress?: (p: StudyProgress) => void },
  rerunOf: string | null,
): Promise<Omit<StudyResult, 'rerunFrom'>> {
  const { id, dir } = await createRunDir(plan.out);
  const progress = options.onProgress ?? (() => undefined);
  const serviceConfig = parseServiceConfig(plan.service).config;
  const manifest: RunManifest = {
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
  };
  await writeManifest(dir, manifest);
  // A body given as text goes into the run directory: both engines read it with open().
  const body = plan.request.body;
  const bodyFile = body && 'text' in body ? join(dir, 'request-body') : undefined;
  if (bodyFile && body && 'text' in body) await writeFileAtomic(bodyFile, body.text);

  let target: ReferenceTarget | undefined;
  let ownService: StudyService | undefined;
  let load: LoggedChild | undefined;
  let probe: GeneratorProbe | undefined;
  let meters: StudyMeters | undefined;
  let baseUrl = plan.target;
  let failure: PlateauError | undefined;
  let engineCode: number | undefined;
  try {
    // Bundled first: a script that does not build, or needs a newer k6, fails before the
    // database and the service start.
    progress({ phase: 'bundling the k6 script' });
    const [script] = await buildK6Scripts({
      outDir: join(dir, 'script'),
      entries: [scriptEntry(plan.script)],
    });
    if (plan.engine === 'k6') requireK6For(script!.imports, manifest.engine.version);
    if (!plan.target) {
      target = await startReferenceTarget({
        db: plan.db,
        service: plan.service,
        dir,
        progress: (phase) => progress({ phase }),
      });
      manifest.database = target.database.info;
      baseUrl = target.url;
    } else if (plan.serviceProcess) {
      // The user's service from plateau.config, started (after the database plateau opens
      // for it, if any) and stopped in the finally below.
      manifest.serviceProcess = serviceProcessRecord(plan.serviceProcess);
      for (const key of plan.serviceProcess.added)
        manifest.warnings.push(`--set ${key}: not in the env of the config's service, added to it`);
      ownService = await startStudyService(plan.serviceProcess, {
        db: plan.db,
        dir,
        progress,
        ...(options.signal ? { signal: options.signal } : {}),
        // Its end mid-load ends the load: the rest would only be refused connections.
        onDeath: () => load?.child.kill('SIGINT'),
      });
      manifest.database = ownService.database?.info ?? null;
    }
    const url = baseUrl!;
    // Reset the server-side buckets so they hold this run only (a service without /steps is fine).
    await resetSteps(url);
    const hasSteps = (await fetchSteps(url)) !== undefined;
    // The service's published meters and PostgreSQL's own views, read from here to the
    // end of the load (a Prometheus server over the same window when they stop).
    meters = new StudyMeters(plan.meters, dir, target?.database.url ?? monitoringUrl(plan.db));
    meters.start();
    if (!hasSteps && !meters.any)
      manifest.warnings.push(
        `${url} does not answer GET /steps and no meters were given (--metrics, --prometheus): the analysis will be client-side only`,
      );

    await writeManifest(dir, manifest);

    // The generator's REST API (real k6's and the engine's), for sent/s and drops/s.
    const apiPort = await freeLoopbackPort();
    const started = startLoad({
      engine: plan.engine,
      k6Bin: plan.k6Bin,
      script: script!.outFile,
      env: { ...scriptEnv(plan, url, vus), ...requestEnv(plan.request, bodyFile) },
      csv: join(dir, 'k6.csv.gz'),
      summary: join(dir, 'summary.json'),
      dir,
      csvMilliseconds: k6CsvMilliseconds(manifest.engine.version),
      address: `127.0.0.1:${apiPort}`,
    });
    load = started.child;
    if (load.child.pid !== undefined) probe = new GeneratorProbe(load.child.pid, plan.engine).start();

    const spawnedMs = Date.now();
    const onAbort = () => load?.child.kill('SIGINT');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const live = new LiveFigures({
      serviceUrl: hasSteps ? url : undefined,
      load: new LoadApiClient(`http://127.0.0.1:${apiPort}`),
    });
    live.start((sample) => {
      const server = sample.server?.last?.step ?? sample.server?.step;
      if (server) manifest.reachedStep = server;
      if (!loadStarted(sample)) progress({ phase: STARTING_PHASE });
      else progress(progressFromSample(sample, plannedNow(plan, sample, spawnedMs, serviceConfig.poolMax)));
    });
    const targetDied = target?.service.exited.then((code) => code);
    const first = await Promise.race([
      load.exited.then((code) => ({ who: 'engine', code })),
      ...(targetDied ? [targetDied.then((code) => ({ who: 'service', code }))] : []),
    ]);
    live.stop();
    options.signal?.removeEventListener('abort', onAbort);
    if (first.who === 'service') {
      await stopChild(load, 'SIGINT', 20_000);
      throw new PlateauError(
        ERROR_CODES.CHILD_FAILED,
        `the statement service died during the load (exit ${first.code}) at step ${manifest.reachedStep ?? 'unknown'}`,
        {
          hint: `its log ends with:\n${target!.service.tail()}`,
        },
      );
    }
    engineCode = first.code;
    if (!LOAD_FINISHED_CODES.includes(engineCode))
      throw loadFailure(plan.engine, started.command, engineCode, load);
    progress({ phase: 'collecting the server side' });
    const report = hasSteps ? await fetchSteps(url) : undefined;
    if (report) await writeFileAtomic(join(dir, 'server.json'), `${JSON.stringify(report, null, 2)}\n`);
  } catch (error) {
    failure =
      error instanceof PlateauError
        ? error
        : new PlateauError(ERROR_CODES.CHILD_FAILED, String((error as Error)?.message ?? error), {
            cause: error,
          });
  } finally {
    if (load) await stopChild(load, 'SIGINT', 20_000);
    if (meters) manifest.meters = { sources: await meters.stop(), declared: plan.meters.declared };
    if (probe) await writeFileAtomic(join(dir, 'generator.json'), `${JSON.stringify(probe.stop())}\n`);
    await target?.stop();
    // A service of the user's that ended on its own is why the study failed, whatever the load did then.
    failure = (await ownService?.stop()) ?? failure;
  }

  const interrupted = options.signal?.aborted === true;
  manifest.status = interrupted ? 'interrupted' : failure ? 'failed' : 'completed';
  manifest.endedAt = new Date().toISOString();
  manifest.exitCode = engineCode ?? null;
  if (failure) manifest.warnings.push(failure.message);
  await writeManifest(dir, manifest);

  let output: AnalysisOutput | undefined;
  try {
    output = await analyzePath(dir);
  } catch (error) {
    if (!failure) failure = error as PlateauError;
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
    await writeManifest(dir, manifest);
  }
  if (failure && !interrupted) throw Object.assign(failure, { runDir: dir });
  return { runDir: dir, manifest, output, exitCode: interrupted ? EXIT_CODES.interrupted : EXIT_CODES.ok };
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
