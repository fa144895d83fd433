// What every executor gets from the runner, and what it gives back.
import { performance } from 'node:perf_hooks';
import { Fifo } from '../../lib/fifo.ts';

import { type ScenarioInfo, VirtualUser } from '../js/context.ts';
import { nowMs, type TestRuntime } from '../js/runtime.ts';
import type { ExecutionTuple } from '../schedule/execution-segment.ts';
import type { ScenarioConfig } from './registry.ts';

/**
 * The test's VUs, as k6 keeps them: one pool for all scenarios. The VUs the plan needs at
 * once are initialized before the test clock starts; a scenario takes VUs when it starts
 * (the ones returned longest ago first) and returns them when it ends, so a later scenario
 * runs on the same VUs (same `__VU`, same connections) instead of new ones. A scenario
 * that needs more than the pool holds initializes them (arrival-rate growth up to maxVUs).
 * `vus_max` counts initialized VUs.
 */
export class VuPool {
  #next = 0;
  readonly #runtime: TestRuntime;
  readonly #tuple: ExecutionTuple;
  readonly #free = new Fifo<VirtualUser>();

  constructor(runtime: TestRuntime, tuple: ExecutionTuple) {
    this.#runtime = runtime;
    this.#tuple = tuple;
  }

  /** VUs initialized so far. */
  get initialized(): number {
    return this.#next;
  }

  /** Initializes VUs until `count` exist (k6 runs each one's init context; here that is instant). */
  initialize(count: number): void {
    while (this.#next < count) this.#free.push(this.#create());
  }

  /** A free VU, or a newly initialized one when none is free. */
  acquire(): VirtualUser {
    return this.#free.shift() ?? this.#create();
  }

  /** Gives a VU back for other scenarios. */
  release(vu: VirtualUser): void {
    this.#free.push(vu);
  }

  #create(): VirtualUser {
    const idInInstance = ++this.#next;
    this.#runtime.vusInitialized++;
    const vu = new VirtualUser(idInInstance, globalVuId(this.#tuple, idInInstance));
    vu.script = this.#runtime.newScriptInstance?.(vu);
    return vu;
  }
}

/** The VU's id across instances: the idInInstance-th element of this segment's stripe. */
function globalVuId(tuple: ExecutionTuple, idInInstance: number): number {
  return segmentedIndex(tuple)(idInInstance - 1) + 1;
}

/**
 * k6's SegmentedIndex as a function: the local 0-based index k of this instance maps to
 * the global index of the k-th element owned by its segment.
 */
export function segmentedIndex(tuple: ExecutionTuple): (local: number) => number {
  const { start, gaps, lcd } = tuple.stripedOffsets();
  const within: number[] = [];
  let element = start;
  for (const gap of gaps) {
    within.push(element);
    element += gap;
  }
  return (local) => Math.floor(local / gaps.length) * lcd + within[local % gaps.length]!;
}

/** What an executor needs to run its scenario. */
export interface ExecutorEnv {
  runtime: TestRuntime;
  config: ScenarioConfig;
  /** This instance's segment within the test. */
  tuple: ExecutionTuple;
  vus: VuPool;
  /** The scenario's exported function. */
  exec: (data: unknown) => unknown;
}

/** A scenario being run. */
export interface Executor extends ScenarioInfo {
  /** Runs the scenario to its end, graceful stop included. */
  run(): Promise<void>;
  /** Iterations completed and VUs currently busy, for progress lines. */
  readonly stats: { iterations: number; dropped: number; active: number; maxVUs: number };
}

/** Milliseconds since an arbitrary origin, monotonic. */
export function monotonicMs(): number {
  return performance.now();
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
export function sleepUnless(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * What every executor shares: its identity as a scenario (name, executor, tags, env), its
 * counters, and its progress through the regular duration. Subclasses implement run() and
 * call markStarted() when the scenario begins.
 */
export abstract class ScenarioExecutor implements Executor {
  readonly name: string;
  readonly executor: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly env: Readonly<Record<string, string>>;
  startTimeMs = 0;
  readonly stats = { iterations: 0, dropped: 0, active: 0, maxVUs: 0 };
  protected readonly environment: ExecutorEnv;
  /** The scenario's regular duration (before gracefulStop), ms. */
  protected readonly regularMs: number;
  /** Monotonic ms when the scenario started; 0 before. */
  protected startedMonotonic = 0;

  constructor(environment: ExecutorEnv, regularDurationNs: number, scenarioEnv: Record<string, string>) {
    this.environment = environment;
    this.regularMs = regularDurationNs / 1e6;
    this.name = environment.config.name;
    this.executor = environment.config.executor;
    this.tags = environment.config.tags;
    this.env = scenarioEnv;
  }

  progress(): number {
    if (this.startedMonotonic === 0) return 0;
    return Math.min(1, (monotonicMs() - this.startedMonotonic) / this.regularMs);
  }

  /**
   * Records the scenario's start (exec.scenario.startTime, progress); returns the monotonic
   * origin. In a test of several engine workers the scenarios start at the moment the
   * coordinator gave (TestRuntime.scenariosAtMs) plus the scenario's startTime: a worker that
   * woke late for it takes that moment as its origin, so its starts fall due on the test's one
   * clock and the late ones go out at once, as in a process that fell behind.
   */
  protected markStarted(): number {
    const wall = nowMs();
    const planned = this.environment.runtime.scenariosAtMs;
    const behindMs = Number.isNaN(planned)
      ? 0
      : Math.max(0, wall - planned - this.environment.config.startTimeNs / 1e6);
    this.startTimeMs = wall - behindMs;
    this.startedMonotonic = monotonicMs() - behindMs;
    return this.startedMonotonic;
  }

  /** Ms left of the regular duration. */
  protected regularMsLeft(): number {
    return this.regularMs - (monotonicMs() - this.startedMonotonic);
  }

  abstract run(): Promise<void>;
}
