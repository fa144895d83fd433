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
import { collectGarbage } from './collect-garbage.ts';
import { type ArrivalRateScenario, arrivalPlan, type ScenarioConfig } from './executor/registry.ts';
import type { Logger } from './js/logger.ts';
import type { RuntimeSettings } from './js/runtime.ts';
import type { ThresholdConfig } from './metrics/thresholds.ts';
import type { Output } from './output/output.ts';
import { ExecutionTuple } from './schedule/execution-segment.ts';
import { TestInstance } from './test-instance.ts';

/** Below this peak arrival rate (iterations/s) a cold start costs nothing measurable. */
export const WARM_UP_MIN_RATE = 1000;

/**
 * The rehearsal runs in rounds of 300 ms at the test's peak rate (at most 10,000/s), each a
 * whole test start of its own (see rehearseHotPath): at least six, one per sink response
 * and iteration shape, then until a round achieves 97 % of its planned iterations, at most
 * ten. A cold process achieves about a sixth in its first round. A round is harder than the
 * test's start: its sink runs in the same thread and its 200 VUs open their connections
 * together, as the test's will.
 *
 * Why a fresh set of objects per round, with several kinds of response and shapes of
 * iteration: with one set carried through every round, V8 optimized the engine's code for
 * those objects and recompiled it for the test's at its start, which is when starts
 * dropped (docs/engine.md "How it keeps time", `npm run bench:engine-ramp`).
 */
export interface RehearsalLimits {
  /** The highest rate a round runs at, iterations/s (the test's peak when lower). */
  maxRate: number;
  roundMs: number;
  maxRounds: number;
  minRounds: number;
  /** A round that achieves this share of its planned iterations is warm. */
  warmShare: number;
  /** After this many rounds, a full collection (engine/collect-garbage.ts); 0 for none. */
  compactAfterRounds: number;
  /** VUs each round starts with, and the most it may grow to. */
  vus: number;
  maxVUs: number;
}

export const REHEARSAL: Readonly<RehearsalLimits> = {
  maxRate: 10_000,
  roundMs: 300,
  maxRounds: 10,
  minRounds: 6,
  compactAfterRounds: 3,
  warmShare: 0.97,
  vus: 200,
  maxVUs: 10_000,
};

/** The highest rate (iterations/s) a scenario plans; 0 for VU-based executors. */
function scenarioPeakRate(s: ScenarioConfig): number {
  return arrivalPlan(s)?.peakRate(s) ?? 0;
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
 * The threshold is where the bench saw cold starts begin to drop (`npm run bench:engine`,
 * docs/engine.md "How it keeps time").
 */
export const COLD_START_WARN_RATE = 5000;

/** The rate (iterations/s) a scenario plans 100 ms after its start, this process's share. */
export function earlyRate(s: ScenarioConfig, tuple: ExecutionTuple): number {
  const plan = arrivalPlan(s);
  if (!plan) return 0;
  const maxVUs = plan.maxVUs(s);
  const share = maxVUs > 0 ? tuple.scale(maxVUs) / maxVUs : 0;
  return plan.rateAt(s, 100e6) * share;
}

/** Warnings for scenarios that start above COLD_START_WARN_RATE, with what to do. */
export function coldStartWarnings(scenarios: readonly ScenarioConfig[], tuple: ExecutionTuple): string[] {
  return scenarios
    .filter((s) => earlyRate(s, tuple) > COLD_START_WARN_RATE)
    .map(
      (s) =>
        `scenario "${s.name}" is at ${Math.round(earlyRate(s, tuple)).toLocaleString('en-US')} iterations/s within 100 ms of its start: ` +
        `its VUs all open their connections at once, and above ~${COLD_START_WARN_RATE.toLocaleString('en-US')}/s per process the engine sends its first ` +
        'starts late while they do (~50 ms of starts, up to ~20 ms late at 10,000/s) and may drop a few ' +
        '(docs/engine.md, "How it keeps time"). Reach the rate by a ramp of about a second ' +
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
  /** Each round's achieved share of its planned iterations, 0–1. */
  achieved: number[];
  /** Connections each round's sink accepted: each round's VUs dial anew, as the test's do. */
  connections: number[];
  /** Whether its last round kept up with the planned rate. */
  warm: boolean;
  ms: number;
}

/**
 * Runs constant-arrival-rate rounds at up to `peakRate` through the real executor, k6
 * modules, metric pipeline and outputs against a local sink, until the code keeps up (see
 * REHEARSAL), then discards everything it produced. Takes two to four seconds.
 *
 * Every round is a whole test start of its own, built by the test's own TestInstance
 * (test-instance.ts), as the test will be one more: a new registry, runtime, module table,
 * VUs (which open their connections in the round's first moments, as the test's will),
 * executor, outputs and sink, on a new port. Code V8 compiled
 * for one round's objects then already serves objects of the next, and the test is a round
 * V8 has seen many times. With one set of objects carried through every round, the test
 * began with a burst of deoptimizations and recompilations on the engine's core: closures
 * of another module table, a first request to a new origin, new connections, headers and
 * tags of shapes the sink never sent.
 */
export async function rehearseHotPath(
  peakRate: number,
  like: RehearsalLikeness = {},
  limits: Readonly<RehearsalLimits> = REHEARSAL,
): Promise<Rehearsal> {
  const started = performance.now();
  const dir = await mkdtemp(join(tmpdir(), 'plateau-warm-up-'));
  const rate = Math.max(1, Math.round(Math.min(limits.maxRate, peakRate)));
  const planned = Math.floor((rate * limits.roundMs) / 1000);
  const config = roundConfig(like.scenario, rate, limits);
  walkLongSchedule(config, ExecutionTuple.create(undefined, undefined));
  let iterations = 0;
  let answered = 0;
  let rounds = 0;
  let warm = false;
  const achieved: number[] = [];
  const connections: number[] = [];
  try {
    while (rounds < limits.maxRounds && !(warm && rounds >= limits.minRounds)) {
      const round = await rehearseRound(rounds, config, like, dir);
      rounds++;
      iterations += round.iterations;
      answered += round.answered;
      achieved.push(round.iterations / planned);
      connections.push(round.connections);
      // The early rounds' garbage goes before the later rounds (engine/collect-garbage.ts).
      if (rounds === limits.compactAfterRounds) collectGarbage('full');
      warm = round.iterations >= limits.warmShare * planned;
    }
    return { iterations, answered, rounds, achieved, connections, warm, ms: performance.now() - started };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One round: a fresh test-like setup, run for one round's schedule, then taken down. */
async function rehearseRound(
  index: number,
  config: ArrivalRateScenario,
  like: RehearsalLikeness,
  dir: string,
): Promise<{ iterations: number; answered: number; connections: number }> {
  const sink = await startSink(SINK_RESPONSES[index % SINK_RESPONSES.length]);
  const url = `http://127.0.0.1:${(sink.server.address() as AddressInfo).port}/warm-up`;
  const instance = new TestInstance({ logger: silent, env: {}, scriptOptions: () => ({}) });
  // The test's settings, except what would send the rehearsal's requests anywhere but its
  // own sink on 127.0.0.1 (hosts), refuse them (blocked destinations) or slow them down
  // (rps, minIterationDuration): it rehearses the request path at full rate.
  const settings = like.settings && {
    ...like.settings,
    hosts: {},
    httpDebug: '' as const,
    rps: 0,
    minIterationDurationMs: 0,
    blockHostnames: [],
    blacklistIPs: [],
  };
  instance.configure(settings, like.thresholds);
  const tuple = ExecutionTuple.create(undefined, undefined);
  const exec = ITERATION_SHAPES[index % ITERATION_SHAPES.length]!(
    instance.modules as unknown as RehearsalModules,
    url,
  );
  try {
    await instance.startOutputs(like.outputs?.(dir) ?? []);
    const vus = instance.vuPool(tuple, config.preAllocatedVUs);
    instance.start(HEALTH_TICK_MS);
    const executor = instance.executor(config, tuple, vus, exec, {});
    await executor.run();
    return { iterations: executor.stats.iterations, answered: sink.answered(), connections: sink.accepted() };
  } finally {
    await instance.close();
    await stopSink(sink);
  }
}

/** The k6 modules a rehearsal iteration uses, as the script sees them. */
interface RehearsalModules {
  k6: { check(value: unknown, sets: Record<string, (value: never) => boolean>): boolean };
  'k6/http': {
    asyncRequest(method: string, url: string, body?: unknown, params?: object): Promise<RehearsalResponse>;
  };
  'k6/execution': {
    scenario: { iterationInTest: number };
    vu: { idInTest: number };
  };
}

interface RehearsalResponse {
  status: number;
  body: unknown;
  timings: { duration: number };
}

/**
 * What a rehearsal iteration does, one per round in turn: a request alone, with a query
 * from k6/execution, with tags, a header and a check (plateau's stepped scripts), with a
 * name tag, with its own timeout and no body. Five different functions, so that the
 * engine's call of a scenario's function is already megamorphic and the script's own
 * function, which the rehearsal never calls, does not throw away the code around it; and
 * the request options a script passes take paths V8 has seen.
 */
const ITERATION_SHAPES: ((modules: RehearsalModules, url: string) => () => Promise<unknown>)[] = [
  (m, url) => async () => (await m['k6/http'].asyncRequest('GET', url)).status,
  (m, url) => async () => {
    const response = await m['k6/http'].asyncRequest(
      'GET',
      `${url}?i=${m['k6/execution'].scenario.iterationInTest}`,
    );
    return response.status === 200;
  },
  (m, url) => async () => {
    const step = String(m['k6/execution'].vu.idInTest % 3);
    const response = await m['k6/http'].asyncRequest('GET', url, null, {
      headers: { 'X-Load-Step': step },
      tags: { step },
    });
    m.k6.check(response, { 'status is 200': (r: RehearsalResponse) => r.status === 200 });
  },
  (m, url) => async () => {
    const response = await m['k6/http'].asyncRequest('GET', url, null, { tags: { name: 'warm-up' } });
    return response.body;
  },
  (m, url) => async () => {
    const response = await m['k6/http'].asyncRequest('GET', url, null, {
      responseType: 'none',
      timeout: '10s',
    });
    return response.timings.duration;
  },
];

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
): ArrivalRateScenario {
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
  const plan = scenario && arrivalPlan(scenario);
  if (scenario && plan) return plan.atRate(scenario, common, rate, durationNs) as ArrivalRateScenario;
  return { ...common, executor: 'constant-arrival-rate', env: {}, tags: {}, rate, durationNs };
}

/**
 * Walks the round's schedule over a few seconds without running it. Past ~1.07 s a
 * planned offset in ns no longer fits V8's small integers: the first such start changes
 * the shape of every planned start and throws away the code optimized for the old one.
 * Walking past it here makes that happen before the rehearsal, not a second into the test.
 */
function walkLongSchedule(config: ArrivalRateScenario, tuple: ExecutionTuple) {
  const plan = arrivalPlan(config)!;
  // The round itself (its fields and rate kept), lasting 3 s.
  const long = plan.atRate(config, config, plan.peakRate(config), 3e9);
  const starts = plan.starts(long, tuple);
  let last = 0;
  for (const start of starts) last = start.offsetNs;
  return last;
}

/**
 * The sink's answers, one per round in turn: responses with different headers, as servers
 * send them. Each set of header names gives the response's headers object another shape;
 * code that has seen five no longer depends on any one, so the target's own headers do
 * not throw it away.
 */
export const SINK_RESPONSES = [
  'Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive',
  'Content-Length: 2',
  'Date: Tue, 01 Dec 2026 00:00:00 GMT\r\nContent-Type: application/json\r\nContent-Length: 2',
  'Server: plateau-sink\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\nCache-Control: no-store',
  'Content-Type: text/plain\r\nVary: Accept-Encoding\r\nX-Request-Id: warm-up\r\nContent-Length: 2',
  'Content-Length: 2\r\nContent-Type: text/html\r\nKeep-Alive: timeout=5',
].map((headers) => Buffer.from(`HTTP/1.1 200 OK\r\n${headers}\r\n\r\nok`, 'latin1'));

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
  /** Connections accepted so far. */
  accepted(): number;
}

export async function startSink(response: Buffer = SINK_RESPONSES[0]!): Promise<Sink> {
  const sockets = new Set<Socket>();
  let answered = 0;
  let accepted = 0;
  const server = createServer((socket: Socket) => {
    accepted++;
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
      for (let k = 0; k < heads; k++) socket.write(response);
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, sockets, answered: () => answered, accepted: () => accepted };
}

export async function stopSink({ server, sockets }: Sink): Promise<void> {
  // Connections the rehearsal left open end with it.
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
