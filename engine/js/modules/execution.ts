// The `k6/execution` module: instance, scenario, VU and test information.
import { nowMs, type TestRuntime } from '../runtime.ts';

/** Thrown by `exec.test.abort()`: ends the iteration and the whole test (exit 108). */
export class TestAbortedError extends Error {
  constructor(message: string) {
    super(message === '' ? 'test aborted' : `test aborted: ${message}`);
    this.name = 'TestAbortedError';
  }
}

/** Builds `k6/execution` for a run; `options` is the consolidated test options. */
export function createExecutionModule(runtime: TestRuntime, options: () => unknown) {
  const inVu = (what: string) => {
    const context = runtime.current();
    if (!context?.scenario) {
      throw new Error(
        `getting ${what} information outside of a VU (in the init context, setup or teardown) is not supported`,
      );
    }
    return context;
  };
  const instance = {
    get currentTestRunDuration() {
      return nowMs() - runtime.startMs;
    },
    get iterationsCompleted() {
      return runtime.iterationsCompleted;
    },
    get iterationsInterrupted() {
      return runtime.iterationsInterrupted;
    },
    get vusActive() {
      return runtime.vusActive;
    },
    get vusInitialized() {
      return runtime.vusInitialized;
    },
  };
  const scenario = {
    get name() {
      return inVu('scenario').scenario!.name;
    },
    get executor() {
      return inVu('scenario').scenario!.executor;
    },
    get startTime() {
      return inVu('scenario').scenario!.startTimeMs;
    },
    get progress() {
      return inVu('scenario').scenario!.progress();
    },
    get iterationInInstance() {
      return inVu('scenario').iterationInScenario;
    },
    get iterationInTest() {
      return inVu('scenario').iterationInTest;
    },
  };
  const vu = {
    get idInInstance() {
      return inVu('VU').vu.idInInstance;
    },
    get idInTest() {
      return inVu('VU').vu.idInTest;
    },
    get iterationInInstance() {
      return inVu('VU').vuIterationInInstance;
    },
    get iterationInScenario() {
      return inVu('VU').vuIterationInScenario;
    },
    get tags() {
      return inVu('VU').vu.tags;
    },
    get metrics() {
      const context = inVu('VU');
      return { tags: context.vu.tags, metadata: context.vu.metadata };
    },
  };
  const test = {
    abort(message = ''): never {
      const error = new TestAbortedError(String(message));
      runtime.stop({ kind: 'aborted', message: error.message });
      throw error;
    },
    fail(message = ''): void {
      runtime.failed = true;
      runtime.logger.log(
        'error',
        message === '' ? 'test marked as failed' : `test marked as failed: ${message}`,
      );
    },
    get options() {
      return options();
    },
  };
  const exports = { instance, scenario, vu, test };
  return { default: exports, ...exports };
}
