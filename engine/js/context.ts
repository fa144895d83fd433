// Per-iteration context that follows each iteration across awaits (AsyncLocalStorage).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Interrupt } from '../executor/interrupt.ts';
import type { ConnectionPools } from './modules/connection-pool.ts';
import type { CookieJar } from './modules/cookies.ts';

/** A virtual user: an identity that runs one iteration at a time. */
export class VirtualUser {
  /** 1-based id within this engine instance (`__VU`, `exec.vu.idInInstance`). */
  readonly idInInstance: number;
  /** 1-based id across all instances of a segmented test (`exec.vu.idInTest`). */
  readonly idInTest: number;
  /** Iterations this VU started, across scenarios. */
  iterationInInstance = 0;
  /** `exec.vu.tags`: writable tags added to this VU's samples. */
  readonly tags: Record<string, string> = {};
  /** `exec.vu.metrics.metadata`. */
  readonly metadata: Record<string, string> = {};
  /** The VU's own connections, made at its first request: k6 gives each VU its own transport. */
  connections: ConnectionPools | undefined = undefined;
  /** The iteration the connections were opened in (for noVUConnectionReuse). */
  connectionsIteration = 0;
  /** The VU's cookie jar, made when first needed, and the iteration it belongs to. */
  cookieJar: CookieJar | undefined = undefined;
  cookieJarIteration = 0;
  /**
   * The exports of this VU's own instance of the script (k6 gives each VU its own
   * runtime); undefined where the run has none (the warm-up rehearsal).
   */
  script: Record<string, unknown> | undefined = undefined;
  /** The scenario this VU last ran an iteration of, and how many it has run there. */
  scenarioName = '';
  iterationsInScenario = 0;

  constructor(idInInstance: number, idInTest: number) {
    this.idInInstance = idInInstance;
    this.idInTest = idInTest;
  }
}

/** What the running scenario exposes to its iterations. */
export interface ScenarioInfo {
  readonly name: string;
  readonly executor: string;
  /** Unix ms when the scenario started. */
  readonly startTimeMs: number;
  /** The scenario's `env` merged over the test's `__ENV`. */
  readonly env: Readonly<Record<string, string>>;
  /** The scenario's `tags`. */
  readonly tags: Readonly<Record<string, string>>;
  /** 0..1 of the scenario's duration. */
  progress(): number;
}

/** One running iteration (or setup/teardown, with `scenario` undefined). */
export interface IterationContext {
  readonly vu: VirtualUser;
  readonly scenario: ScenarioInfo | undefined;
  /** 0-based index of this iteration within its scenario on this instance (`exec.scenario.iterationInInstance`). */
  readonly iterationInScenario: number;
  /** 0-based index of this iteration among this VU's in the scenario (`exec.vu.iterationInScenario`). */
  readonly vuIterationInScenario: number;
  /** 0-based index of this iteration among all this VU's (`exec.vu.iterationInInstance`, `__ITER`). */
  readonly vuIterationInInstance: number;
  /** 0-based global index across instances (`exec.scenario.iterationInTest`). */
  readonly iterationInTest: number;
  /** Current group path: `''` at root, `::a::b` when nested. */
  group: string;
  /** Fires when the iteration is interrupted (gracefulStop expired, test aborted). */
  readonly interrupt: Interrupt;
  /** Bytes sent and received since the last data_sent/data_received emission. */
  bytesSent: number;
  bytesReceived: number;
  /** `sleep()` promises not yet settled, to warn about un-awaited sleeps. */
  pendingSleeps: number;
  /** Set once interrupted: samples from a dead iteration are dropped. */
  interrupted: boolean;
}

const storage = new AsyncLocalStorage<IterationContext>();

/** Runs `fn` as the body of `context`. */
export function runInContext<T>(context: IterationContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The iteration whose code is running, or undefined in the init context. */
export function currentContext(): IterationContext | undefined {
  return storage.getStore();
}
