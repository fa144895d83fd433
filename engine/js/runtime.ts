// The state one test run shares between the engine, its executors and the k6 modules.
import { performance } from 'node:perf_hooks';
import type { HttpOptions, TestOptions } from '../config/options.ts';
import type { BuiltinMetricName } from '../metrics/builtin.ts';
import type { Metric, SampleContainer, Tags } from '../metrics/metric.ts';
import type { MetricRegistry } from '../metrics/registry.ts';
import { DEFAULT_SYSTEM_TAG_FLAGS, type SystemTagFlags, systemTagFlags } from '../metrics/system-tags.ts';
import type { Output } from '../output/output.ts';
import { currentContext, type IterationContext, type VirtualUser } from './context.ts';
import type { Logger } from './logger.ts';
import type { TlsSettings } from './modules/connection-pool.ts';
import { DestinationRules } from './modules/destinations.ts';

/** The options that change how requests and iterations run. */
export type RuntimeSettings = HttpOptions &
  Pick<TestOptions, 'tags' | 'minIterationDurationMs' | 'rps' | 'systemTags'>;

/** How often buffered samples are handed to the outputs. */
const OUTPUT_FLUSH_MS = 100;
/**
 * Buffered samples are handed over sooner once this many wait: at high rates, samples held
 * for the whole 100 ms outlive V8's young-generation collections, get copied and promoted,
 * and the collector's pauses become the engine's start lag.
 */
const OUTPUT_BATCH_SAMPLES = 1024;

/** A check's counts within its group. */
export interface CheckRecord {
  name: string;
  path: string;
  passes: number;
  fails: number;
}

/** A group and what happened inside it (k6's root_group tree). */
export interface GroupRecord {
  name: string;
  path: string;
  groups: Map<string, GroupRecord>;
  checks: Map<string, CheckRecord>;
}

/** Why a run ended early. */
export type StopCause =
  | { kind: 'aborted'; message: string } // exec.test.abort()
  | { kind: 'threshold'; message: string } // abortOnFail
  | { kind: 'signal'; message: string } // SIGINT/SIGTERM
  | { kind: 'output'; message: string }; // an output's file stopped taking the samples

/**
 * k6's default: 200–399 are expected. One function for every runtime, so code optimized
 * in the warm-up rehearsal's runtime calls the same one in the test's.
 */
const expectedByDefault: ResponseCallback = (status) => status >= 200 && status <= 399;

/** Decides whether a response counts as expected (k6's responseCallback). */
export type ResponseCallback = (status: number) => boolean;

/**
 * The run's shared state: metrics, outputs, logger, env and tags, the group/check tree,
 * VU counts, and the stop signal. One instance per `runTest`.
 */
export class TestRuntime {
  readonly registry: MetricRegistry;
  readonly logger: Logger;
  /** `__ENV` outside scenarios: system env (unless excluded) plus `-e` flags. */
  readonly env: Readonly<Record<string, string>>;
  /** options.tags and --tag: added to every sample (set once options are known). */
  runTags: Tags;
  /**
   * Unix ms when the test started: just before setup, after init (k6 initializes VUs before
   * the test clock starts), so `currentTestRunDuration` excludes loading the script.
   */
  startMs: number;
  readonly rootGroup: GroupRecord = { name: '', path: '', groups: new Map(), checks: new Map() };
  readonly stopController = new AbortController();
  responseCallback: ResponseCallback | null = expectedByDefault;
  discardResponseBodies = false;
  /** options.maxRedirects: redirects a request follows when its params do not say. */
  maxRedirects = 10;
  /** options.noCookiesReset: VUs keep their cookies across iterations. */
  noCookiesReset = false;
  /** options.noConnectionReuse and noVUConnectionReuse (see TestOptions). */
  noConnectionReuse = false;
  noVUConnectionReuse = false;
  /** options.insecureSkipTLSVerify: accept any server certificate. */
  insecureSkipTLSVerify = false;
  /** options.httpDebug: '' (off), 'headers' or 'full' (with bodies). */
  httpDebug: '' | 'headers' | 'full' = '';
  /** options.throw: a failed request rejects its promise instead of logging a warning. */
  throwOnRequestError = false;
  /** options.userAgent: sent by requests that set no User-Agent ('' for none). */
  userAgent = '';
  /** options.hosts: addresses dialled instead of DNS answers. */
  hosts: Readonly<Record<string, string>> = {};
  /** options.tlsVersion and tlsAuth. */
  tls: TlsSettings = { auth: [] };
  /** options.blockHostnames and blacklistIPs. */
  destinations = new DestinationRules([], []);
  /** options.minIterationDuration in ms (0: none). */
  minIterationDurationMs = 0;
  /** options.rps: requests per second for the whole test (0: no limit). */
  rps = 0;
  /** Sees every sample as it is emitted (the full summary's per-scenario breakdown). */
  sampleObserver: { add(container: SampleContainer): void } | undefined = undefined;
  /** options.systemTags: which system tags samples carry. */
  systemTags: SystemTagFlags = DEFAULT_SYSTEM_TAG_FLAGS;
  /** The earliest moment the next request may go out under options.rps. */
  #rpsNextMs = 0;
  setupData: unknown;
  /** VUs executing an iteration now, and VUs initialized. */
  vusActive = 0;
  vusInitialized = 0;
  iterationsCompleted = 0;
  iterationsInterrupted = 0;
  /** exec.test.fail() was called: the run continues but ends with exit 110. */
  failed = false;
  stopCause: StopCause | undefined;
  /** Makes a VU's own instance of the script (runTest sets it once the script is loaded). */
  newScriptInstance: ((vu: VirtualUser) => Record<string, unknown>) | undefined = undefined;
  /** Whether the test clock has started (markStarted). */
  started = false;
  /**
   * With engine workers: the moment (epoch ms) every worker's scenarios start, as the
   * coordinator gave it; each scenario starts its startTime after it (executor.ts). NaN in a
   * test run by one process: a number from the start, so that setting it changes no hidden
   * class the warm-up rehearsal optimized for (warm-up.ts).
   */
  scenariosAtMs = Number.NaN;
  /** `__VU` while a VU's instance runs its init context (0: the first instance's). */
  initializingVu = 0;
  readonly #outputs: Output[];
  #pending: SampleContainer[] = [];
  #pendingSamples = 0;
  #flushTimer: NodeJS.Timeout | undefined;
  readonly #warnedOnce = new Set<string>();

  /** Takes the test's options (once they are known). */
  applySettings(settings: RuntimeSettings): void {
    this.runTags = settings.tags;
    this.discardResponseBodies = settings.discardResponseBodies;
    this.maxRedirects = settings.maxRedirects;
    this.noCookiesReset = settings.noCookiesReset;
    this.noConnectionReuse = settings.noConnectionReuse;
    this.noVUConnectionReuse = settings.noVUConnectionReuse;
    this.insecureSkipTLSVerify = settings.insecureSkipTLSVerify;
    this.throwOnRequestError = settings.throw;
    this.httpDebug = settings.httpDebug;
    this.userAgent = settings.userAgent;
    this.hosts = settings.hosts;
    this.tls = settings.tls;
    this.destinations = new DestinationRules(settings.blockHostnames, settings.blacklistIPs);
    this.minIterationDurationMs = settings.minIterationDurationMs;
    this.rps = settings.rps;
    this.systemTags = systemTagFlags(settings.systemTags);
  }

  /**
   * The metadata of a sample `context` emits: what the script set in
   * `exec.vu.metrics.metadata`, and `vu` and `iter` when options.systemTags enables them
   * (k6 keeps them out of tags); undefined when there is none.
   */
  sampleMetadata(context: IterationContext | undefined): Record<string, string> | undefined {
    if (!context) return undefined;
    const { vu, iter } = this.systemTags;
    // exec.vu.metrics.metadata: what the script set on its VU, copied as it is now.
    const own = context.vu.metadata;
    let hasOwn = false;
    for (const _ in own) {
      hasOwn = true;
      break;
    }
    if (!hasOwn && !vu && !iter) return undefined;
    const metadata: Record<string, string> = {};
    if (hasOwn) for (const key in own) metadata[key] = String(own[key]);
    // k6 counts iter per VU from 0, as __ITER.
    if (iter) metadata.iter = String(Math.max(0, context.vuIterationInInstance));
    if (vu) metadata.vu = String(context.vu.idInInstance);
    return metadata;
  }

  /**
   * How long a request must wait for its turn under options.rps, its turn reserved: as k6's
   * limiter (a token bucket holding one), requests go out at most 1/rps apart, in the order
   * they asked. 0 when there is no limit or the turn is now.
   */
  rpsWaitMs(): number {
    if (this.rps <= 0) return 0;
    const now = nowMs();
    const turn = Math.max(now, this.#rpsNextMs);
    this.#rpsNextMs = turn + 1000 / this.rps;
    return turn - now;
  }

  constructor(options: {
    registry: MetricRegistry;
    logger: Logger;
    env: Record<string, string>;
    runTags: Tags;
    outputs: Output[];
  }) {
    this.registry = options.registry;
    this.logger = options.logger;
    this.env = options.env;
    this.runTags = options.runTags;
    this.#outputs = options.outputs;
    this.startMs = nowMs();
  }

  /** Starts the test clock; call once init is done, right before setup. */
  markStarted(): void {
    this.startMs = nowMs();
    this.started = true;
  }

  /** Starts handing samples to the outputs every 100 ms. */
  startFlushing(): void {
    this.#flushTimer ??= setInterval(() => this.flush(), OUTPUT_FLUSH_MS);
    this.#flushTimer.unref();
  }

  /** Hands every buffered sample to the outputs now. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    this.#pendingSamples = 0;
    for (const output of this.#outputs) output.addMetricSamples(batch);
  }

  stopFlushing(): void {
    if (this.#flushTimer) clearInterval(this.#flushTimer);
    this.flush();
  }

  /** Records one sample: aggregated at once (for thresholds), buffered for the outputs. */
  emit(metric: Metric, value: number, tags: Tags, timeMs = nowMs(), metadata?: Record<string, string>): void {
    const container: SampleContainer = metadata
      ? { timeMs, tags, metrics: [metric], values: [value], metadata }
      : { timeMs, tags, metrics: [metric], values: [value] };
    this.emitContainer(container);
  }

  /** Emits a built-in metric. */
  emitBuiltin(
    name: BuiltinMetricName,
    value: number,
    tags: Tags,
    timeMs?: number,
    metadata?: Record<string, string>,
  ): void {
    this.emit(this.registry.builtin(name), value, tags, timeMs, metadata);
  }

  /** Records the samples of one event (see SampleContainer). */
  emitContainer(container: SampleContainer): void {
    const { metrics, values, tags } = container;
    for (let i = 0; i < metrics.length; i++) {
      const metric = metrics[i]!;
      metric.observed = true;
      metric.ingest(values[i]!, tags);
    }
    this.sampleObserver?.add(container);
    this.#pending.push(container);
    this.#pendingSamples += metrics.length;
    if (this.#pendingSamples >= OUTPUT_BATCH_SAMPLES) this.flush();
  }

  /** The iteration running now, if any. */
  current(): IterationContext | undefined {
    return currentContext();
  }

  /**
   * The tags every sample of `context` carries: run tags, scenario tags, `group` and
   * `scenario` (when in a scenario), then the VU's own tags. `group` overrides the
   * context's current group (an iteration's own samples are tagged at the root).
   */
  contextTags(context: IterationContext | undefined, group = context?.group ?? ''): Record<string, string> {
    const tags: Record<string, string> = { ...this.runTags };
    if (context?.scenario) Object.assign(tags, context.scenario.tags);
    if (this.systemTags.group) tags.group = group;
    if (context?.scenario && this.systemTags.scenario) tags.scenario = context.scenario.name;
    if (context) Object.assign(tags, context.vu.tags);
    return tags;
  }

  /** The group record for a path (`::a::b`), creating it and its parents. */
  group(path: string): GroupRecord {
    let group = this.rootGroup;
    if (path === '') return group;
    let current = '';
    for (const name of path.split('::').slice(1)) {
      current = `${current}::${name}`;
      let next = group.groups.get(name);
      if (!next) {
        next = { name, path: current, groups: new Map(), checks: new Map() };
        group.groups.set(name, next);
      }
      group = next;
    }
    return group;
  }

  /** Logs a warning only the first time `key` is seen. */
  warnOnce(key: string, message: string): void {
    if (this.#warnedOnce.has(key)) return;
    this.#warnedOnce.add(key);
    this.logger.log('warning', message);
  }

  /** Ends the run early (abort, abortOnFail threshold, signal, a failed output). The first cause wins. */
  stop(cause: StopCause): void {
    if (this.stopCause) return;
    this.stopCause = cause;
    this.stopController.abort(cause);
  }

  get stopped(): boolean {
    return this.stopCause !== undefined;
  }
}

/** Wall-clock epoch ms with sub-millisecond precision, monotonic within the process. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
