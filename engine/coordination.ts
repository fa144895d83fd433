// How one engine process takes part in a test run by several (`plateau engine run
// --workers N`): the points where runTest hands over to the coordinator. Without one,
// runTest runs the whole test alone.
import type { TestRuntime } from './js/runtime.ts';
import type { ThresholdConfig } from './metrics/thresholds.ts';
import type { ScenarioBreakdown } from './output/scenario-breakdown.ts';
import type { ExecutionStatus } from './rest-api.ts';
import type { Progress } from './runner.ts';

/** What a coordinated run lets its coordinator read while the clock runs. */
export interface CoordinatedRun {
  /** `--summary-mode full`'s per-scenario breakdown, when kept. */
  breakdown: ScenarioBreakdown | undefined;
  /** The scenarios' progress; undefined before they start. */
  progress(): Progress | undefined;
  status(): ExecutionStatus;
}

/**
 * The coordinator's side of runTest, called in this order. Thresholds are judged by the
 * coordinator over every process's metrics, so a coordinated run evaluates none of its own
 * while it runs; the process that ends the test evaluates them at the end over all of them.
 */
export interface TestCoordination {
  /**
   * The script loaded and its options hold; its metrics and thresholds are known. The
   * coordinator may stop `runtime` from now on.
   */
  loaded(runtime: TestRuntime, thresholds: Record<string, ThresholdConfig | ThresholdConfig[]>): void;
  /** Warmed up, VUs initialized. Resolves when the clock is to start, all processes at once, or when stopped. */
  ready(): Promise<void>;
  /** The clock started. */
  started(run: CoordinatedRun): void;
  /**
   * setup()'s data: `run` runs the script's setup() here (one process does), or the data
   * another process's setup() returned. Undefined when the run was stopped first.
   */
  setupData(run: () => Promise<unknown>): Promise<unknown>;
  /**
   * The scenarios ended here. Resolves with `summary` when this process ends the test
   * (every process's results are then merged into its registry and run: teardown(),
   * thresholds, handleSummary and the summary), or `part` when it only closes its outputs.
   */
  scenariosEnded(): Promise<'summary' | 'part'>;
}
