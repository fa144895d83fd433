// A short rehearsal of the engine's hot path before the test clock starts.
//
// A cold Node process runs the per-request code (executor dispatch, iteration context,
// undici, the HTTP module, metric emission, CSV formatting) in V8's interpreter until it
// is hot enough to be compiled. At several thousand iterations per second that costs the
// first half second of a test: iterations start late, VUs stay busy, starts are dropped.
// k6, compiled ahead of time, does not pay it. The engine therefore runs the same code
// paths for a moment against a sink server of its own on 127.0.0.1, with a throwaway
// registry and outputs, so the test's first second runs on warm code. Nothing of the
// rehearsal reaches the script, the target or the run's outputs.
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  ConstantArrivalRateScenario,
  RampingArrivalRateScenario,
  ScenarioConfig,
} from './config/scenarios.ts';
import { startHealthTicker } from './engine-health.ts';
import { createExecutor } from './executor/create-executor.ts';
import { VuPool } from './executor/executor.ts';
import type { Logger } from './js/logger.ts';
import { createHttpModule } from './js/modules/http.ts';
import { type RuntimeSettings, TestRuntime } from './js/runtime.ts';
import { MetricRegistry } from './metrics/registry.ts';
import type { ThresholdConfig } from './metrics/thresholds.ts';
import type { Output } from './output/output.ts';
import { constantArrivalRateStarts, rampingArrivalRateStarts } from './schedule/arrival-rate-schedule.ts';
import { ExecutionTuple } from './schedule/execution-segment.ts';

/** Below this peak arrival rate (iterations/s) a cold start costs nothing measurable. */
export const WARM_UP_MIN_RATE = 1000;

/**
 * The rehearsal runs in rounds of half a second at the test's peak rate (at most 10,000/s)
 * until a round achieves 98 % of its planned iterations, at most six rounds. A cold
 * process achieves about half in its first round; the code is warm when it keeps up.
 * Measured at 10,000/s (3 s runs, six interleaved pairs each): one fixed second against a
 * node:http sink achieved ~4,000 of 8,000 rehearsal iterations; rounds until warm, with the
 * test's shapes (RehearsalLikeness), took the test's first-second drops from a mean of
 * 860–980 to 350–580. What is left is opening connections to the target, which a rehearsal
 * must not touch (docs/engine.md, "How it keeps time").
 */
export interface RehearsalLimits {
  /** The highest rate a round runs at, iterations/s (the test's peak when lower). */
  maxRate: number;
  roundMs: number;
  maxRounds: number;
  minRounds: number;
  /** A round that achieves this share of its planned iterations is warm. */
  warmShare: number;
  /** VUs each round starts with, and the most it may grow to. */
  vus: number;
  maxVUs: number;
}

export const REHEARSAL: Readonly<RehearsalLimits> = {
  maxRate: 10_000,
  roundMs: 500,
  maxRounds: 6,
  minRounds: 2,
  warmShare: 0.98,
  vus: 200,
  maxVUs: 10_000,
};

/** The highest rate (iterations/s) a scenario plans; 0 for VU-based executors. */
function scenarioPeakRate(s: ScenarioConfig): number {
  if (s.executor === 'constant-arrival-rate') return (s.rate * 1e9) / s.timeUnitNs;
  if (s.executor === 'ramping-arrival-rate') {
    const most = Math.max(s.startRate, ...s.stages.map((stage) => stage.target));
    return (most * 1e9) / s.timeUnitNs;
  }
  return 0;
}

/** The highest arrival rate (iterations/s) any arrival-rate scenario plans. */
export function peakArrivalRate(scenarios: readonly ScenarioConfig[]): number {
  return Math.max(0, ...scenarios.map(scenarioPeakRate));
}

/** The arrival-rate scenario with the highest planned rate, if any. */
export function peakScenario(scenarios: readonly ScenarioConfig[]): ScenarioConfig | undefined {
  let best: ScenarioConfig | undefined;
  for (const s of scenarios) if (scenarioPeakRate(s) > (best ? scenarioPeakRate(best) : 0)) best = s;
  return best;
}

/**
 * Above this rate per process (iterations/s), a scenario that is at full rate from its
 * first moment drops starts while its VUs open their connections: each VU's first start
 * opens one (as in k6), and a Node connection costs more CPU than the time between starts.
 * 5,000/s started cold with none dropped in every measured run; 10,000/s dropped ~500
 * (docs/engine.md, "How it keeps time").
 */
export const COLD_START_WARN_RATE = 5000;

/** The rate (iterations/s) a scenario plans 100 ms after its start, this process's share. */
export function earlyRate(s: ScenarioConfig, tuple: ExecutionTuple): number {
  if (s.executor !== 'constant-arrival-rate' && s.executor !== 'ramping-arrival-rate') return 0;
  const share = s.maxVUs > 0 ? tuple.scale(s.maxVUs) / s.maxVUs : 0;
  const perSecond = 1e9 / s.timeUnitNs;
  if (s.executor === 'constant-arrival-rate') return s.rate * perSecond * share;
  // The ramp's rate at 100 ms: through its stages, linearly within each.
  const atNs = 100e6;
  let from = s.startRate;
  let stageStart = 0;
  for (const stage of s.stages) {
    if (stageStart + stage.durationNs > atNs) {
      const into = (atNs - stageStart) / stage.durationNs;
      return (from + (stage.target - from) * into) * perSecond * share;
    }
    from = stage.target;
    stageStart += stage.durationNs;
  }
  return from * perSecond * share;
}

/** Warnings for scenarios that start above COLD_START_WARN_RATE, with what to do. */
export function coldStartWarnings(scenarios: readonly ScenarioConfig[], tuple: ExecutionTuple): string[] {
  return scenarios
    .filter((s) => earlyRate(s, tuple) > COLD_START_WARN_RATE)
    .map(
      (s) =>
        `scenario "${s.name}" is at ${Math.round(earlyRate(s, tuple)).toLocaleString('en-US')} iterations/s within 100 ms of its start: ` +
        `its VUs all open their connections at once, and above ~${COLD_START_WARN_RATE.toLocaleString('en-US')}/s per process the engine can drop starts ` +
        'while they do (docs/engine.md, "How it keeps time"). Reach the rate by a ramp of about a second ' +
        '(ramping-arrival-rate), or split the load over processes with --execution-segment',
    );
}

const silent: Logger = { log: () => undefined };

/**
 * What the rehearsal copies from the test, so that V8 optimizes the per-request code for
 * the objects the test will use: tags objects of the same shape, the same kinds of output
 * (gzip or not). Code optimized for other shapes is thrown away ("deoptimized") when the
 * test starts, and runs slowly until it is optimized again: that was ~45 deoptimizations
 * in the test's first 100 ms.
 */
export interface RehearsalLikeness {
  /** The test's options that change how requests run (user agent, tags, reuse, …). */
  settings?: RuntimeSettings;
  /** The test's thresholds: their sub-metrics change what every sample goes through. */
  thresholds?: Record<string, ThresholdConfig | ThresholdConfig[]>;
  /** The arrival-rate scenario with the highest rate: rehearsed with its executor. */
  scenario?: ScenarioConfig;
  /** Outputs like the test's, writing into `dir` (removed afterwards). */
  outputs?: (dir: string) => Output[];
}

/** What a rehearsal did: its iterations, its rounds and how long it took. */
export interface Rehearsal {
  iterations: number;
  /** Requests the sink answered: one per iteration, unless something sent them elsewhere. */
  answered: number;
  rounds: number;
  /** Whether its last round kept up with the planned rate. */
  warm: boolean;
  ms: number;
}

/**
 * Runs constant-arrival-rate rounds at up to `peakRate` through the real executor, HTTP
 * module, metric pipeline and CSV formatter against a local sink, until the code keeps up
 * (see REHEARSAL), then discards everything it produced. Takes one to three seconds.
 */
export async function rehearseHotPath(
  peakRate: number,
  like: RehearsalLikeness = {},
  limits: Readonly<RehearsalLimits> = REHEARSAL,
): Promise<Rehearsal> {
  const started = performance.now();
  const dir = await mkdtemp(join(tmpdir(), 'plateau-warm-up-'));
  const sink = await startSink();
  const url = `http://127.0.0.1:${(sink.server.address() as AddressInfo).port}/warm-up`;
  const registry = new MetricRegistry();
  const outputs = like.outputs?.(dir) ?? [];
  const runtime = new TestRuntime({ registry, logger: silent, env: {}, runTags: {}, outputs });
  // The test's settings, except what would send the rehearsal's requests anywhere but its
  // own sink on 127.0.0.1 (hosts), refuse them (blocked destinations) or slow them down
  // (rps, minIterationDuration): it rehearses the request path at full rate.
  if (like.settings) {
    runtime.applySettings({
      ...like.settings,
      hosts: {},
      httpDebug: '',
      rps: 0,
      minIterationDurationMs: 0,
      blockHostnames: [],
      blacklistIPs: [],
    });
  }
  if (like.thresholds) registry.applyThresholds(like.thresholds);
  const http = createHttpModule(runtime);
  const rate = Math.max(1, Math.round(Math.min(limits.maxRate, peakRate)));
  const planned = Math.floor((rate * limits.roundMs) / 1000);
  const tuple = ExecutionTuple.create(undefined, undefined);
  // Each round takes the VUs (and their open connections) the round before gave back.
  const vus = new VuPool(runtime, tuple);
  const exec = async () => {
    const response = await http.module.default.asyncRequest('GET', url);
    return response.status;
  };
  const config = roundConfig(like.scenario, rate, limits);
  walkLongSchedule(config, tuple);
  let iterations = 0;
  let rounds = 0;
  let warm = false;
  const stopHealth = startHealthTicker(runtime, HEALTH_TICK_MS);
  try {
    for (const output of outputs) await output.start();
    runtime.startFlushing();
    while (rounds < limits.maxRounds && !(warm && rounds >= limits.minRounds)) {
      const executor = createExecutor({ runtime, config, tuple, vus, exec }, {});
      await executor.run();
      rounds++;
      iterations += executor.stats.iterations;
      warm = executor.stats.iterations >= limits.warmShare * planned;
    }
    return { iterations, answered: sink.answered(), rounds, warm, ms: performance.now() - started };
  } finally {
    stopHealth();
    runtime.stopFlushing();
    for (const output of outputs) await output.stop().catch(() => undefined);
    await http.close();
    await stopSink(sink);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The rehearsal's health ticks: often enough that its metrics take part in every round. */
const HEALTH_TICK_MS = 100;

/**
 * A round's scenario: the test's own (same executor, and an object of the same shape, as
 * V8 sees it: spread from it, overriding only small integers) running at `rate` for one
 * round. A test without an arrival-rate scenario does not rehearse; the fallback is for tests.
 */
export function roundConfig(
  scenario: ScenarioConfig | undefined,
  rate: number,
  limits: Readonly<RehearsalLimits>,
): ConstantArrivalRateScenario | RampingArrivalRateScenario {
  const common = {
    name: 'warm-up',
    startTimeNs: 0,
    gracefulStopNs: 1e9,
    exec: 'default',
    timeUnitNs: 1e9,
    preAllocatedVUs: limits.vus,
    maxVUs: limits.maxVUs,
  };
  const durationNs = limits.roundMs * 1e6;
  if (scenario?.executor === 'ramping-arrival-rate') {
    const stage = { ...scenario.stages[0]!, durationNs, target: rate };
    return { ...scenario, ...common, startRate: rate, stages: [stage] };
  }
  if (scenario?.executor === 'constant-arrival-rate') return { ...scenario, ...common, rate, durationNs };
  return { ...common, executor: 'constant-arrival-rate', env: {}, tags: {}, rate, durationNs };
}

/**
 * Walks the round's schedule over a few seconds without running it. Past ~1.07 s a
 * planned offset in ns no longer fits V8's small integers: the first such start changes
 * the shape of every planned start and throws away the code optimized for the old one.
 * Walking past it here makes that happen before the rehearsal, not a second into the test.
 */
function walkLongSchedule(
  config: ConstantArrivalRateScenario | RampingArrivalRateScenario,
  tuple: ExecutionTuple,
) {
  const longNs = 3e9;
  const starts =
    config.executor === 'constant-arrival-rate'
      ? constantArrivalRateStarts({ ...config, durationNs: longNs }, tuple)
      : rampingArrivalRateStarts(
          { ...config, stages: config.stages.map((stage) => ({ ...stage, durationNs: longNs })) },
          tuple,
        );
  let last = 0;
  for (const start of starts) last = start.offsetNs;
  return last;
}

const SINK_RESPONSE = Buffer.from(
  'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok',
  'latin1',
);

/**
 * The rehearsal's target: answers every request head with a fixed 200 over raw sockets.
 * A node:http server in the same thread cost the rehearsal as much CPU as the requests it
 * rehearsed, so a cold first round achieved half its rate; this one costs a few µs.
 * The rehearsal sends GETs without bodies, so a request is its head, ending in CRLFCRLF.
 */
export interface Sink {
  server: Server;
  sockets: Set<Socket>;
  /** Request heads answered so far. */
  answered(): number;
}

export async function startSink(): Promise<Sink> {
  const sockets = new Set<Socket>();
  let answered = 0;
  const server = createServer((socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // The last three bytes of the previous chunk, in case CRLFCRLF spans two chunks.
    let carry = 0;
    socket.on('data', (chunk: Buffer) => {
      let heads = 0;
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i];
        if (byte === 13 || byte === 10) {
          // CR LF CR LF: states 1, 2, 3, 4.
          const expected = carry % 2 === 0 ? 13 : 10;
          carry = byte === expected ? carry + 1 : byte === 13 ? 1 : 0;
          if (carry === 4) {
            heads++;
            carry = 0;
          }
        } else carry = 0;
      }
      answered += heads;
      for (let k = 0; k < heads; k++) socket.write(SINK_RESPONSE);
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, sockets, answered: () => answered };
}

export async function stopSink({ server, sockets }: Sink): Promise<void> {
  // Connections the rehearsal left open end with it.
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
