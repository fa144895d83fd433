// Runs one iteration of a scenario on a VU, and emits k6's per-iteration samples.
import type { IterationContext, ScenarioInfo, VirtualUser } from '../js/context.ts';
import { runInContext } from '../js/context.ts';
import { describe } from '../js/loader.ts';
import { TestAbortedError } from '../js/modules/execution.ts';
import { nowMs, type TestRuntime } from '../js/runtime.ts';
import type { BuiltinMetricName } from '../metrics/builtin.ts';
import type { Metric } from '../metrics/metric.ts';
import type { Interrupt } from './interrupt.ts';

/** How an iteration ended. */
export type IterationOutcome = 'completed' | 'interrupted';

/**
 * Runs `exec(setupData)` as one iteration of `scenario` on `vu`. When `interrupt` aborts
 * before the iteration returns, the iteration is abandoned as interrupted: it emits no
 * `iterations`/`iteration_duration` sample and whatever it does later is not recorded.
 * An exception inside the iteration is logged and the iteration still counts as full,
 * as in k6.
 */
export function runIteration(
  runtime: TestRuntime,
  scenario: ScenarioInfo,
  exec: (data: unknown) => unknown,
  vu: VirtualUser,
  iterationInScenario: number,
  iterationInTest: number,
  interrupt: Interrupt,
): Promise<IterationOutcome> {
  // k6 counts each VU's iterations per scenario; a VU runs one scenario at a time and a
  // scenario never takes it back once it has ended, so a change of name starts over.
  if (vu.scenarioName !== scenario.name) {
    vu.scenarioName = scenario.name;
    vu.iterationsInScenario = 0;
  }
  const context: IterationContext = {
    vu,
    scenario,
    iterationInScenario,
    vuIterationInScenario: vu.iterationsInScenario++,
    vuIterationInInstance: vu.iterationInInstance++,
    iterationInTest,
    group: '',
    interrupt,
    bytesSent: 0,
    bytesReceived: 0,
    pendingSleeps: 0,
    interrupted: false,
  };
  runtime.vusActive++;
  const started = nowMs();
  // One promise settled by whichever comes first, the body or the interrupt: every promise
  // costs an AsyncLocalStorage hook on Node 20, and thousands of iterations run a second.
  // Callbacks are written inline and the state lives in an IterationEnd: a named closure per
  // iteration would cost a defineProperty each under tsx (esbuild's keepNames).
  return new Promise<IterationOutcome>((resolve) => {
    const ending = new IterationEnd(runtime, context, started, resolve);
    let body: unknown;
    try {
      body = runInContext(context, () => exec(runtime.setupData));
    } catch (error) {
      ending.fail(error);
      return;
    }
    if (!isThenable(body)) {
      ending.end('completed');
      return;
    }
    ending.listen();
    body.then(
      () => ending.end('completed'),
      (error: unknown) => ending.fail(error),
    );
  });
}

/** Ends one iteration once: its samples, its log line for an error, and its VU's release. */
class IterationEnd {
  #settled = false;
  #unlisten: () => unknown = noop;
  readonly #runtime: TestRuntime;
  readonly #context: IterationContext;
  readonly #started: number;
  readonly #resolve: (outcome: IterationOutcome) => void;

  constructor(
    runtime: TestRuntime,
    context: IterationContext,
    started: number,
    resolve: (outcome: IterationOutcome) => void,
  ) {
    this.#runtime = runtime;
    this.#context = context;
    this.#started = started;
    this.#resolve = resolve;
  }

  /** Ends the iteration as interrupted when its interrupt aborts first. */
  listen(): void {
    this.#unlisten = this.#context.interrupt.onAbort(() => this.end('interrupted'));
  }

  /** The body threw or rejected: a full iteration that failed, unless it was interrupted. */
  fail(error: unknown): void {
    this.end(this.#context.interrupt.aborted ? 'interrupted' : 'completed', error);
  }

  end(outcome: IterationOutcome, error?: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#unlisten();
    const runtime = this.#runtime;
    runtime.vusActive--;
    if (error !== undefined && outcome === 'completed' && !(error instanceof TestAbortedError)) {
      runtime.logger.log('error', describe(error), { source: 'stacktrace' });
    }
    const ended = finishIteration(runtime, this.#context, this.#started, outcome);
    // options.minIterationDuration: a full iteration keeps its VU for the rest of it, after
    // its samples; an interrupt (the scenario's end) frees it at once, as in k6.
    const restMs = outcome === 'completed' ? runtime.minIterationDurationMs - (nowMs() - this.#started) : 0;
    const interrupt = this.#context.interrupt;
    if (restMs <= 0 || interrupt.aborted) this.#resolve(ended);
    else holdVU(interrupt, restMs, () => this.#resolve(ended));
  }
}

function noop(): void {}

/** Calls `release` after `ms`, or as soon as `interrupt` aborts. */
function holdVU(interrupt: Interrupt, ms: number, release: () => void): void {
  let unlisten: () => unknown = noop;
  const timer = setTimeout(() => {
    unlisten();
    release();
  }, ms);
  unlisten = interrupt.onAbort(() => {
    clearTimeout(timer);
    release();
  });
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** Emits the iteration's samples once it has ended; returns how it ended. */
function finishIteration(
  runtime: TestRuntime,
  context: IterationContext,
  started: number,
  outcome: IterationOutcome,
): IterationOutcome {
  if (context.pendingSleeps > 0 && outcome === 'completed') {
    runtime.warnOnce(
      'unawaited-sleep',
      'an iteration ended while a sleep() was still pending: write `await sleep(s)`, otherwise the sleep does not delay anything',
    );
  }
  const ended = nowMs();
  const tags = runtime.contextTags(context, '');
  context.interrupted = outcome === 'interrupted';
  const { completed, interrupted } = iterationMetrics(runtime);
  const metrics = outcome === 'completed' ? completed : interrupted;
  const values =
    outcome === 'completed'
      ? [context.bytesSent, context.bytesReceived, ended - started, 1]
      : [context.bytesSent, context.bytesReceived];
  const metadata = runtime.sampleMetadata(context);
  runtime.emitContainer(
    metadata ? { timeMs: ended, tags, metrics, values, metadata } : { timeMs: ended, tags, metrics, values },
  );
  if (outcome === 'completed') runtime.iterationsCompleted++;
  else runtime.iterationsInterrupted++;
  return outcome;
}

/** An iteration's metrics: data, and for a completed one its duration and count. */
const iterationMetricLists = new WeakMap<TestRuntime, { completed: Metric[]; interrupted: Metric[] }>();

function iterationMetrics(runtime: TestRuntime): { completed: Metric[]; interrupted: Metric[] } {
  let lists = iterationMetricLists.get(runtime);
  if (!lists) {
    const metric = (name: BuiltinMetricName) => runtime.registry.builtin(name);
    const interrupted = [metric('data_sent'), metric('data_received')];
    lists = { interrupted, completed: [...interrupted, metric('iteration_duration'), metric('iterations')] };
    iterationMetricLists.set(runtime, lists);
  }
  return lists;
}
