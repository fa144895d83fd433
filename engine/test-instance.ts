// One test start: what runTest builds for the test and the warm-up rehearsal for each of
// its rounds, in the same steps and order, so that a change to how a test starts is
// rehearsed too (warm-up.ts says why the rehearsal must look like the test).
import type { PlateauError } from '../contract/index.ts';
import { startHealthTicker } from './engine-health.ts';
import { type Executor, VuPool } from './executor/executor.ts';
import { createExecutor, type ScenarioConfig } from './executor/registry.ts';
import type { ModuleTable } from './js/loader.ts';
import type { Logger } from './js/logger.ts';
import { createModuleTable } from './js/modules/index.ts';
import { type RuntimeSettings, TestRuntime } from './js/runtime.ts';
import { MetricRegistry } from './metrics/registry.ts';
import type { ThresholdConfig } from './metrics/thresholds.ts';
import type { Output } from './output/output.ts';
import type { ExecutionTuple } from './schedule/execution-segment.ts';

export class TestInstance {
  readonly registry = new MetricRegistry();
  readonly runtime: TestRuntime;
  /** The k6 modules the script imports, bound to this instance. */
  readonly modules: ModuleTable;
  /** The outputs samples go to once started (startOutputs). */
  readonly outputs: Output[] = [];
  readonly #closeModules: () => Promise<void>;
  #stopHealth: (() => void) | undefined;

  /** `scriptOptions` is what `exec.test.options` reads once the options are known. */
  constructor(init: { logger: Logger; env: Record<string, string>; scriptOptions: () => unknown }) {
    this.runtime = new TestRuntime({
      registry: this.registry,
      logger: init.logger,
      env: init.env,
      runTags: {},
      outputs: this.outputs,
    });
    const table = createModuleTable(this.runtime, init.scriptOptions);
    this.modules = table.modules;
    this.#closeModules = table.close;
  }

  /**
   * The test's settings and thresholds. k6 registers the expected_response sub-metric only
   * while the tag is on. Returns the thresholds' warnings.
   */
  configure(
    settings: RuntimeSettings | undefined,
    thresholds: Record<string, ThresholdConfig | ThresholdConfig[]> | undefined,
  ): string[] {
    if (settings) {
      this.runtime.applySettings(settings);
      if (!settings.systemTags.includes('expected_response')) this.registry.forgetExpectedResponseSubmetric();
    }
    return thresholds ? this.registry.applyThresholds(thresholds) : [];
  }

  /** Starts `outputs`; `onFailure` is told when one stops taking the samples (Output.start). */
  async startOutputs(outputs: readonly Output[], onFailure?: (failure: PlateauError) => void): Promise<void> {
    this.outputs.push(...outputs);
    for (const output of outputs) await output.start(onFailure);
  }

  /** The test's VU pool with `count` VUs initialized, as k6 does before the clock starts. */
  vuPool(tuple: ExecutionTuple, count: number): VuPool {
    const vus = new VuPool(this.runtime, tuple);
    vus.initialize(count);
    return vus;
  }

  /** Starts the clock: samples flow to the outputs, and the engine's health ticks. */
  start(healthTickMs?: number): void {
    this.runtime.markStarted();
    this.runtime.startFlushing();
    this.#stopHealth = startHealthTicker(this.runtime, healthTickMs);
  }

  /** The executor of `scenario`; `scenarioEnv` is `__ENV` with the scenario's env merged. */
  executor(
    scenario: ScenarioConfig,
    tuple: ExecutionTuple,
    vus: VuPool,
    exec: (data: unknown) => unknown,
    scenarioEnv: Record<string, string>,
  ): Executor {
    return createExecutor({ runtime: this.runtime, config: scenario, tuple, vus, exec }, scenarioEnv);
  }

  /** Stops the health ticks and the flushing, stops every output (what they hold is written), and closes the connections. */
  async close(): Promise<void> {
    this.#stopHealth?.();
    this.runtime.stopFlushing();
    for (const output of this.outputs) await output.stop().catch(() => undefined);
    await this.#closeModules();
  }
}
