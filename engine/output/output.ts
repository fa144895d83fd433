// The output interface (k6's output.Output): description, start, samples, stop.
import type { SampleContainer } from '../metrics/metric.ts';

/**
 * Receives every sample of a run. `addMetricSamples` must not block: outputs buffer and
 * write on their own schedule. `stop` flushes everything and closes files.
 */
export interface Output {
  description(): string;
  start(): Promise<void>;
  addMetricSamples(containers: readonly SampleContainer[]): void;
  stop(): Promise<void>;
}
