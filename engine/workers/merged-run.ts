// The coordinator's view of a test run by several workers as one: merged metrics, VUs,
// status and progress, from each worker's latest snapshot.
import { MetricRegistry } from '../metrics/registry.ts';
import { EXECUTION_STATUS, type ExecutionStatus } from '../rest-api.ts';
import type { Progress } from '../runner.ts';
import {
  type MetricState,
  mergeMetricStates,
  type RegistryShape,
  registryFromShape,
} from './metrics-state.ts';
import { WorkerMirror } from './worker-mirror.ts';
import type { WorkerSnapshot } from './worker-protocol.ts';

/** k6's /v1/status figures of the whole test. */
export interface MergedStatus {
  status: ExecutionStatus;
  vus: number;
  vusMax: number;
}

/**
 * The test as one: each worker's snapshots applied to its mirror, and the metrics of all
 * merged into a registry built like every worker's (registryFromShape), so thresholds,
 * the REST API and the summary read it exactly as they read one process's. The merged
 * registry is rebuilt when asked after a snapshot arrived: a few hundred histogram pages
 * added, well under a millisecond.
 */
export class MergedRun {
  readonly #shape: RegistryShape;
  readonly #mirrors: WorkerMirror[];
  readonly #latest: (Omit<WorkerSnapshot, 'metrics'> | undefined)[];
  #registry: MetricRegistry | undefined;

  constructor(shape: RegistryShape, workers: number) {
    this.#shape = shape;
    this.#mirrors = Array.from({ length: workers }, () => new WorkerMirror());
    this.#latest = new Array(workers).fill(undefined);
    // Built once here so that a shape that does not hold fails where the shape arrived.
    this.#registry = registryFromShape(shape, new MetricRegistry());
  }

  /** Takes worker `index`'s snapshot. */
  apply(index: number, snapshot: WorkerSnapshot): void {
    const { metrics, ...live } = snapshot;
    this.#mirrors[index]!.apply(metrics);
    this.#latest[index] = live;
    this.#registry = undefined;
  }

  /** Every worker's metrics merged, in a registry with the test's sub-metrics and thresholds. */
  registry(): MetricRegistry {
    if (!this.#registry) {
      const registry = registryFromShape(this.#shape, new MetricRegistry());
      for (const mirror of this.#mirrors) mergeMetricStates(registry, mirror.states());
      this.#registry = registry;
    }
    return this.#registry;
  }

  /** Worker `index`'s whole metrics as of its last snapshot. */
  metricsOf(index: number): MetricState[] {
    return this.#mirrors[index]!.states();
  }

  /**
   * The status of the slowest worker (k6's numbers grow as a run goes: setup 6, running 7,
   * teardown 8), VUs summed. Before any snapshot: initializing.
   */
  status(): MergedStatus {
    const seen = this.#latest.filter((s) => s !== undefined);
    return {
      status:
        seen.length < this.#latest.length
          ? EXECUTION_STATUS.initVUs
          : (Math.min(...seen.map((s) => s.status)) as ExecutionStatus),
      vus: seen.reduce((sum, s) => sum + s.vus, 0),
      vusMax: seen.reduce((sum, s) => sum + s.vusMax, 0),
    };
  }

  /** The progress line's figures: each scenario as far as its slowest worker, counts summed. */
  progress(elapsedMs: number): Progress | undefined {
    const progresses = this.#latest.flatMap((s) => (s?.progress ? [s.progress] : []));
    return progresses.length === 0 ? undefined : mergeProgress(progresses, elapsedMs);
  }
}

/** Workers' progress as one test's: by scenario name, the least progress, VUs and counts summed. */
export function mergeProgress(progresses: readonly Progress[], elapsedMs: number): Progress {
  const byName = new Map<string, Progress['scenarios'][number]>();
  for (const progress of progresses) {
    for (const scenario of progress.scenarios) {
      const ours = byName.get(scenario.name);
      if (!ours) {
        byName.set(scenario.name, { ...scenario });
        continue;
      }
      ours.progress = Math.min(ours.progress, scenario.progress);
      ours.active += scenario.active;
      ours.maxVUs += scenario.maxVUs;
      ours.iterations += scenario.iterations;
      ours.dropped += scenario.dropped;
    }
  }
  return { elapsedMs, scenarios: [...byName.values()] };
}
