// Runs a k6 script end to end: init, setup, scenarios, teardown, thresholds, summary.
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES, EXIT_CODES, isPlateauError, PlateauError } from '../contract/index.ts';
import { collectGarbage } from './collect-garbage.ts';
import { consolidateOptions, type OptionOverrides, type TestOptions } from './config/options.ts';
import type { TestCoordination } from './coordination.ts';
import { ScriptError } from './errors.ts';
import { type Executor, sleepUnless } from './executor/executor.ts';
import { Interrupt } from './executor/interrupt.ts';
import { maxPlannedVUs } from './executor/registry.ts';
import { type IterationContext, runInContext, VirtualUser } from './js/context.ts';
import { describe, type LoadedScript, loadScript } from './js/loader.ts';
import { type Logger, stderrLogger, withoutDebug } from './js/logger.ts';
import { scriptGlobals } from './js/modules/index.ts';
import { nowMs, type TestRuntime } from './js/runtime.ts';
import { csvTagColumns } from './metrics/system-tags.ts';
import { evaluateThresholds } from './metrics/threshold-evaluator.ts';
import { CsvOutput, parseCsvConfig } from './output/csv.ts';
import { JsonOutput } from './output/json.ts';
import { machineReadableSummary } from './output/machine-readable-summary.ts';
import type { Output } from './output/output.ts';
import { ScenarioBreakdown } from './output/scenario-breakdown.ts';
import { buildSummaryData, type SummaryData, summaryExport } from './output/summary.ts';
import { renderTextSummary, textSummaryInput } from './output/text-summary.ts';
import {
  EXECUTION_STATUS,
  type ExecutionStatus,
  type RestAddress,
  type RestApi,
  runSource,
  startRestApi,
} from './rest-api.ts';
import { ExecutionTuple, parseSegment, parseSequence } from './schedule/execution-segment.ts';
import { TestInstance } from './test-instance.ts';
import {
  coldStartWarnings,
  peakArrivalRate,
  peakScenario,
  REHEARSAL,
  rehearseHotPath,
  WARM_UP_MIN_RATE,
} from './warm-up.ts';

/** How often thresholds are evaluated during a run (k6: every 2 s). */
const THRESHOLD_INTERVAL_MS = 2000;

/** An `--out` flag: `csv=…` or `json=…`. */
export interface OutputSpec {
  type: 'csv' | 'json';
  arg: string;
  /** Writes here instead of the file `arg` names (an engine worker's share of it). */
  fileName?: string;
  /** false: a CSV without its header line (a worker's share that is joined onto another's). */
  header?: boolean;
}

/** The file an output writes to: `fileName` when set, else the one its `arg` (or K6_CSV_FILENAME) names. */
export function outputFileName(spec: OutputSpec, env: Record<string, string | undefined> = {}): string {
  if (spec.fileName !== undefined) return spec.fileName;
  return spec.type === 'csv' ? parseCsvConfig(spec.arg, env).fileName : spec.arg;
}

/** A snapshot for progress displays. */
export interface Progress {
  elapsedMs: number;
  scenarios: {
    name: string;
    progress: number;
    active: number;
    maxVUs: number;
    iterations: number;
    dropped: number;
  }[];
}

/** Everything `runTest` takes; flags follow `k6 run`. */
export interface RunConfig {
  /** A bundled .js or a .ts script. */
  script: string;
  /** `-e K=V` values. */
  env?: Record<string, string>;
  /** Whether `__ENV` includes the system environment (k6 run: true). */
  includeSystemEnv?: boolean;
  outputs?: OutputSpec[];
  summaryExport?: string;
  /**
   * k6's --summary-mode: `compact` (default), `full` (every metric, and a section per
   * scenario with its groups) or `legacy` (the pre-1.0 layout) for the end-of-test text;
   * `disabled` writes none: no text, no handleSummary, no export (k6's --no-summary).
   */
  summaryMode?: SummaryMode;
  /**
   * k6's --new-machine-readable-summary: handleSummary receives, and --summary-export
   * writes, k6's machine-readable summary (schema 1.0.0) instead of the legacy-shaped data.
   */
  machineReadableSummary?: boolean;
  /** k6's --console-output: the script's console lines are appended to this file instead of stderr. */
  consoleOutput?: string;
  overrides?: OptionOverrides;
  logger?: Logger;
  /** Where the text summary and handleSummary's `stdout` go; default process.stdout. */
  stdout?: (text: string) => void;
  /** Aborting it stops the run like SIGINT (exit 105), after writing what was gathered. */
  signal?: AbortSignal;
  /**
   * Rehearse the per-request code against a local sink before the test clock starts when an
   * arrival-rate scenario plans ≥ 1,000 iterations/s (default true); see engine/warm-up.ts.
   */
  warmUp?: boolean;
  /** Called every second while scenarios run. */
  onProgress?: (progress: Progress) => void;
  /**
   * k6's --address: serve k6's REST API subset (rest-api.ts) there from before the script
   * loads until the run ends. Off when absent (k6 v0.x listens on localhost:6565 by default).
   * A port that cannot be had ends the run with 106, as in k6.
   */
  restAddress?: RestAddress;
  /**
   * This process runs a share of a test of several (an engine worker, engine/workers/): the
   * coordinator starts its clock, judges thresholds and says who writes the summary.
   */
  coordination?: TestCoordination;
}

/** k6's summary modes (v1 also had `legacy`, the pre-1.0 layout; v2 dropped it). */
export const SUMMARY_MODES = ['compact', 'full', 'legacy', 'disabled'] as const;
export type SummaryMode = (typeof SUMMARY_MODES)[number];

/** What a run ended with. */
export interface RunResult {
  exitCode: number;
  /** Why, in words, when it is not 0. */
  reason: string;
  summary: SummaryData | undefined;
  durationMs: number;
}

/**
 * Runs `config.script` with k6's semantics and writes k6's output formats. Never throws
 * for problems in the script or its options: they become the exit codes k6 uses (104
 * invalid config, 107 script exception, 99 thresholds, 105 interrupted, 108 aborted,
 * 110 marked failed), with outputs flushed either way; an output whose file stops taking
 * the samples stops the test with plateau's 124.
 */
export async function runTest(config: RunConfig): Promise<RunResult> {
  const startedMs = Date.now();
  const logger = config.logger ?? withoutDebug(stderrLogger(startedMs));
  const write = config.stdout ?? ((text: string) => process.stdout.write(text));
  const env = { ...(config.includeSystemEnv === false ? {} : stringEnv(process.env)), ...(config.env ?? {}) };
  let options: TestOptions | undefined;
  const instance = new TestInstance({ logger, env, scriptOptions: () => options?.scriptOptions });
  const { registry, runtime } = instance;
  // Full mode's per-scenario sections need every sample by scenario and group as it comes.
  const breakdown = config.summaryMode === 'full' ? new ScenarioBreakdown() : undefined;
  runtime.sampleObserver = breakdown;
  const stopExternally = () => runtime.stop({ kind: 'signal', message: 'stopped by signal' });
  config.signal?.addEventListener('abort', stopExternally, { once: true });
  const cleanups: (() => void | Promise<void>)[] = [];
  const result = (exitCode: number, reason: string, summary?: SummaryData): RunResult => ({
    exitCode,
    reason,
    summary,
    durationMs: Date.now() - startedMs,
  });
  // Where the run is, for the REST API's /v1/status.
  let status: ExecutionStatus = EXECUTION_STATUS.created;
  let restApi: RestApi | undefined;
  if (config.restAddress) {
    try {
      restApi = await startRestApi(
        config.restAddress,
        runSource({ registry, runtime, status: () => status }),
      );
    } catch (error) {
      const { host, port } = config.restAddress;
      const message = `the REST API cannot listen on ${host}:${port}: ${describe(error)}`;
      logger.log('error', `${message}\nchoose another --address (a free port), or leave --address out`);
      config.signal?.removeEventListener('abort', stopExternally);
      await instance.close();
      return result(EXIT_CODES.restApiFailed, message);
    }
  }

  try {
    // Init: load the script with the engine's k6 modules.
    const consoleLogger = config.consoleOutput
      ? await fileLogger(config.consoleOutput, startedMs, cleanups)
      : logger;
    const script = await loadScript(
      config.script,
      instance.modules,
      scriptGlobals(runtime),
      logger,
      consoleLogger,
    );
    const exports = script.exports;
    runtime.newScriptInstance = (vu) => newVuInstance(runtime, script, vu);

    // Options, thresholds, segments and outputs: all config problems before anything runs.
    options = consolidateOptions(exports.options, config.overrides);
    const missing = options.scenarios.filter((s) => typeof exports[s.exec] !== 'function');
    if (missing.length > 0) {
      throw PlateauError.invalidConfig(
        missing.map((s) => ({
          setting: `scenarios.${s.name}.exec`,
          message: `the script exports no function "${s.exec}"`,
          hint:
            s.exec === 'default'
              ? 'export default async function () { … }'
              : `export function ${s.exec}() { … }`,
        })),
      );
    }
    for (const warning of options.warnings) logger.log('warning', warning);
    for (const warning of instance.configure(options, options.thresholds)) logger.log('warning', warning);
    const coordination = config.coordination;
    const tuple = ExecutionTuple.create(
      options.executionSegment ? parseSegment(options.executionSegment) : undefined,
      options.executionSegmentSequence ? parseSequence(options.executionSegmentSequence) : undefined,
    );
    coordination?.loaded(runtime, options.thresholds);
    const tagColumns = csvTagColumns(options.systemTags);
    const makeOutputs = (fileName: (spec: OutputSpec, index: number) => string | undefined) =>
      (config.outputs ?? []).map((spec, index): Output => {
        const name = fileName(spec, index) ?? spec.fileName;
        if (spec.type === 'json') return new JsonOutput(name ?? spec.arg);
        const csv = parseCsvConfig(spec.arg, env);
        // Assigned, not spread: the same object shape as the test's own (see warm-up.ts).
        if (name) csv.fileName = name;
        if (spec.header === false) csv.header = false;
        return new CsvOutput(csv, tagColumns);
      });
    await instance.startOutputs(
      makeOutputs(() => undefined),
      (failure) => {
        logger.log('error', `${failure.message}${failure.hint ? `\n${failure.hint}` : ''}`);
        runtime.stop({ kind: 'output', message: failure.message });
      },
    );
    for (const warning of coldStartWarnings(options.scenarios, tuple)) logger.log('warning', warning);
    // Before the clock starts, as k6 initializes VUs before it: warm the per-request code.
    const peakRate = tuple.scale(Math.round(peakArrivalRate(options.scenarios))); // this segment's share
    const rehearse = config.warmUp !== false && peakRate >= WARM_UP_MIN_RATE;
    if (rehearse) {
      logger.log(
        'info',
        `warming up: rehearsing up to ${Math.min(peakRate, REHEARSAL.maxRate).toLocaleString('en-US')}/s against a local sink for 2-4 s before the test starts (--no-warm-up skips this)`,
      );
      const rehearsal = await rehearseHotPath(peakRate, {
        settings: options,
        thresholds: options.thresholds,
        scenario: peakScenario(options.scenarios),
        // Same kinds of output, into the rehearsal's own directory; gzip where the test gzips.
        outputs: (dir) =>
          makeOutputs((spec, index) => {
            const real = spec.type === 'csv' ? parseCsvConfig(spec.arg, env).fileName : spec.arg;
            return join(dir, `${index}.${spec.type}${real.endsWith('.gz') ? '.gz' : ''}`);
          }),
      });
      logger.log(
        'info',
        `warmed up: ${rehearsal.iterations} rehearsal iterations in ${rehearsal.rounds} rounds against a local sink in ${(rehearsal.ms / 1000).toFixed(1)}s, the last achieving ${Math.floor((rehearsal.achieved.at(-1) ?? 0) * 100)} %${rehearsal.warm ? '' : ', still not keeping up: expect a slow first second'} (--no-warm-up skips this)`,
      );
    }

    // k6 initializes the VUs its plan needs at once before the test clock starts.
    status = EXECUTION_STATUS.initVUs;
    const vus = instance.vuPool(tuple, maxPlannedVUs(options.scenarios, tuple));
    status = EXECUTION_STATUS.initDone;
    // With workers, every process starts its clock at the moment the coordinator gives.
    await coordination?.ready();
    // The rehearsal's garbage goes now, not amid the test's first requests (collect-garbage.ts).
    if (rehearse) collectGarbage('young');
    instance.start();
    status = EXECUTION_STATUS.started;
    let executors: Executor[] = [];
    if (coordination) {
      coordination.started({
        breakdown,
        progress: () => (executors.length > 0 ? snapshot(runtime, executors) : undefined),
        status: () => status,
      });
    } else {
      const thresholdTimer = setInterval(() => {
        const verdict = evaluateThresholds(registry, nowMs() - runtime.startMs, false);
        if (verdict.abort) {
          runtime.stop({
            kind: 'threshold',
            message: `threshold ${verdict.abort.threshold.source} on ${verdict.abort.metric} crossed`,
          });
        }
      }, THRESHOLD_INTERVAL_MS);
      thresholdTimer.unref();
      cleanups.push(() => clearInterval(thresholdTimer));
    }

    // setup(): with workers, one of them runs it and the others take what it returned.
    const setupVu = new VirtualUser(0, 0);
    const runSetup = async (): Promise<unknown> => {
      if (typeof exports.setup !== 'function' || options!.noSetup) return undefined;
      status = EXECUTION_STATUS.setup;
      const data = await runLifecycle(
        runtime,
        setupVu,
        '::setup',
        () => (exports.setup as () => unknown)(),
        options!.setupTimeoutNs,
        'setup',
      );
      return data === undefined ? undefined : JSON.parse(JSON.stringify(data));
    };
    runtime.setupData = coordination ? await coordination.setupData(runSetup) : await runSetup();

    // Scenarios, each from its startTime, all at once.
    executors = options.scenarios.map((scenario) =>
      instance.executor(scenario, tuple, vus, perVu(runtime, scenario.exec), {
        ...env,
        ...scenario.env,
      }),
    );
    status = EXECUTION_STATUS.running;
    const progressTimer = config.onProgress
      ? setInterval(() => config.onProgress?.(snapshot(runtime, executors)), 1000)
      : undefined;
    progressTimer?.unref();
    await Promise.all(
      executors.map(async (executor, i) => {
        await sleepUnless(options!.scenarios[i]!.startTimeNs / 1e6, runtime.stopController.signal);
        if (!runtime.stopped) await executor.run();
      }),
    );
    if (progressTimer) clearInterval(progressTimer);
    config.onProgress?.(snapshot(runtime, executors));
    // A worker whose share is not the one that ends the test only closes its outputs.
    if ((await coordination?.scenariosEnded()) === 'part') return result(EXIT_CODES.ok, '');

    // teardown(), unless the run was interrupted by a signal.
    if (
      typeof exports.teardown === 'function' &&
      !options.noTeardown &&
      runtime.stopCause?.kind !== 'signal'
    ) {
      status = EXECUTION_STATUS.teardown;
      await runLifecycle(
        runtime,
        setupVu,
        '::teardown',
        () => (exports.teardown as (d: unknown) => unknown)(runtime.setupData),
        options.teardownTimeoutNs,
        'teardown',
      );
    }

    return await finish(runtime, options, exports, config, write, result);
  } catch (error) {
    // A worker's summary of its share alone would be wrong: the coordinator says what ended it.
    const summaries = config.coordination ? undefined : options;
    if (error instanceof ScriptError) {
      logger.log('error', error.message);
      await finishAfterError(runtime, summaries, config, write);
      return result(error.exitCode, error.message);
    }
    if (isPlateauError(error)) {
      const exitCode =
        error.code === ERROR_CODES.INVALID_CONFIG || error.code === ERROR_CODES.INPUT
          ? EXIT_CODES.invalidConfig
          : 1;
      logger.log('error', `${error.message}${error.hint ? `\n${error.hint}` : ''}`);
      await finishAfterError(runtime, summaries, config, write);
      return result(exitCode, error.message);
    }
    throw error;
  } finally {
    status = EXECUTION_STATUS.ended;
    config.signal?.removeEventListener('abort', stopExternally);
    for (const cleanup of cleanups) await cleanup();
    await restApi?.close();
    await instance.close();
  }
}

/**
 * A logger appending k6's text log lines to `path` (closed by a cleanup). An unwritable path
 * is a configuration error, found before the test starts.
 */
async function fileLogger(
  path: string,
  startedMs: number,
  cleanups: (() => void | Promise<void>)[],
): Promise<Logger> {
  const stream = createWriteStream(path, { flags: 'a' });
  try {
    await once(stream, 'open');
  } catch (error) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `cannot write the console output to ${path}: ${describe(error)}`,
      {
        hint: 'pass --console-output a file in a directory that exists and can be written',
        cause: error,
      },
    );
  }
  cleanups.push(() => new Promise<void>((resolve) => stream.end(resolve)));
  return stderrLogger(startedMs, (line) => stream.write(line), false);
}

/** Final thresholds, summary (handleSummary, export, text) and the exit code. */
async function finish(
  runtime: TestRuntime,
  options: TestOptions,
  exports: Record<string, unknown>,
  config: RunConfig,
  write: (text: string) => void,
  result: (exitCode: number, reason: string, summary?: SummaryData) => RunResult,
): Promise<RunResult> {
  const durationMs = nowMs() - runtime.startMs;
  const verdict = evaluateThresholds(runtime.registry, durationMs, true);
  const summary = buildSummaryData(runtime, options.summaryTrendStats, durationMs, options.summaryTimeUnit);
  await writeSummaries(runtime, summary, exports, config, write, options.handleSummaryTimeoutNs / 1e6);
  const cause = runtime.stopCause;
  if (cause?.kind === 'aborted') return result(EXIT_CODES.testAborted, cause.message, summary);
  if (cause?.kind === 'threshold') return result(EXIT_CODES.thresholdsFailed, cause.message, summary);
  if (cause?.kind === 'signal') return result(EXIT_CODES.interrupted, cause.message, summary);
  if (cause?.kind === 'output') return result(EXIT_CODES.outputFailed, cause.message, summary);
  if (verdict.anyFailed) return result(EXIT_CODES.thresholdsFailed, 'some thresholds have failed', summary);
  if (runtime.failed) return result(EXIT_CODES.testFailed, 'the test was marked as failed', summary);
  return result(EXIT_CODES.ok, '', summary);
}

/** After a script or config error: still write the summary export of what was gathered. */
async function finishAfterError(
  runtime: TestRuntime,
  options: TestOptions | undefined,
  config: RunConfig,
  write: (text: string) => void,
): Promise<void> {
  if (!options) return;
  const durationMs = nowMs() - runtime.startMs;
  evaluateThresholds(runtime.registry, durationMs, true);
  const summary = buildSummaryData(runtime, options.summaryTrendStats, durationMs, options.summaryTimeUnit);
  await writeSummaries(runtime, summary, {}, config, write, 0);
}

async function writeSummaries(
  runtime: TestRuntime,
  summary: SummaryData,
  exports: Record<string, unknown>,
  config: RunConfig,
  write: (text: string) => void,
  handleSummaryTimeoutMs: number,
): Promise<void> {
  if (config.summaryMode === 'disabled') return;
  const mode =
    config.summaryMode === 'full' || config.summaryMode === 'legacy' ? config.summaryMode : 'compact';
  // --new-machine-readable-summary: k6's schema 1.0.0 for both handleSummary and the export.
  const machine = config.machineReadableSummary
    ? machineReadableSummary(summary, mode, config.script)
    : undefined;
  if (config.summaryExport) {
    await writeFile(
      config.summaryExport,
      machine ? `${JSON.stringify(machine, null, 4)}\n` : summaryExport(summary),
    );
  }
  let printDefault = true;
  if (typeof exports.handleSummary === 'function') {
    try {
      const files = (await withTimeout(
        Promise.resolve((exports.handleSummary as (d: unknown) => unknown)(machine ?? summary)),
        handleSummaryTimeoutMs,
        `handleSummary() did not finish within ${handleSummaryTimeoutMs / 1000}s (options.handleSummaryTimeout)`,
      )) as Record<string, unknown> | null;
      if (files && typeof files === 'object') {
        // A returned map replaces the default summary; its `stdout` entry is printed instead.
        printDefault = false;
        for (const [path, content] of Object.entries(files)) {
          const text = content instanceof ArrayBuffer ? Buffer.from(content) : String(content);
          if (path === 'stdout') write(String(text));
          else if (path === 'stderr') process.stderr.write(text);
          else await writeFile(path, text);
        }
      }
    } catch (error) {
      runtime.logger.log('error', `handleSummary() failed: ${describe(error)}`);
    }
  }
  if (printDefault) {
    const breakdown =
      runtime.sampleObserver instanceof ScenarioBreakdown ? runtime.sampleObserver : undefined;
    write(renderTextSummary(textSummaryInput(runtime, summary, mode, breakdown)));
  }
}

/** `promise`, or a rejection with `message` once `ms` have passed. */
function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs setup or teardown in a VU of its own, with its timeout (k6: 100/101 on timeout). */
async function runLifecycle(
  runtime: TestRuntime,
  vu: VirtualUser,
  group: string,
  fn: () => unknown,
  timeoutNs: number,
  what: 'setup' | 'teardown',
): Promise<unknown> {
  const interrupt = new Interrupt();
  const context: IterationContext = {
    vu,
    scenario: undefined,
    iterationInScenario: 0,
    vuIterationInScenario: 0,
    vuIterationInInstance: 0,
    iterationInTest: 0,
    group,
    interrupt,
    bytesSent: 0,
    bytesReceived: 0,
    pendingSleeps: 0,
    interrupted: false,
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        interrupt.abort();
        reject(
          new ScriptError(
            `${what}() did not finish within ${timeoutNs / 1e9}s (raise options.${what}Timeout)`,
            {
              exitCode: what === 'setup' ? EXIT_CODES.setupTimeout : EXIT_CODES.teardownTimeout,
            },
          ),
        );
      }, timeoutNs / 1e6);
    });
    return await Promise.race([runInContext(context, async () => fn()), timeout]);
  } catch (error) {
    if (error instanceof ScriptError) throw error;
    throw new ScriptError(`${what}() threw: ${describe(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
    const tags = runtime.contextTags(context);
    delete tags.scenario;
    const metadata = runtime.sampleMetadata(context);
    runtime.emitBuiltin('data_sent', context.bytesSent, tags, undefined, metadata);
    runtime.emitBuiltin('data_received', context.bytesReceived, tags, undefined, metadata);
  }
}

/**
 * A VU's own instance of the script: its init context runs with `__VU` set to the VU, as
 * in k6. One that throws before the test starts fails the run (107); one that throws later
 * (a VU added mid-test) stops the test and the VU runs on the first instance.
 */
function newVuInstance(runtime: TestRuntime, script: LoadedScript, vu: VirtualUser): Record<string, unknown> {
  runtime.initializingVu = vu.idInInstance;
  try {
    return script.newInstance();
  } catch (error) {
    const message = `the init context of VU ${vu.idInInstance} threw: ${script.describeError(error)}`;
    if (!runtime.started) throw new ScriptError(message, { cause: error });
    runtime.logger.log('error', message);
    runtime.stop({ kind: 'aborted', message });
    return script.exports;
  } finally {
    runtime.initializingVu = 0;
  }
}

/** The scenario's function of the running VU's own instance. */
function perVu(runtime: TestRuntime, name: string): (data: unknown) => unknown {
  return (data) => {
    const fn = runtime.current()?.vu.script?.[name];
    if (typeof fn !== 'function')
      throw new Error(`the VU's instance of the script has no function "${name}"`);
    return fn(data);
  };
}

function snapshot(runtime: TestRuntime, executors: Executor[]): Progress {
  return {
    elapsedMs: nowMs() - runtime.startMs,
    scenarios: executors.map((e) => ({ name: e.name, progress: e.progress(), ...e.stats })),
  };
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}
