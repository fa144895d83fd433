// The output interface (k6's output.Output): description, start, samples, stop.
import type { PlateauError } from '../../contract/index.ts';
import type { SampleContainer } from '../metrics/metric.ts';

/**
 * Receives every sample of a run. `addMetricSamples` must not block: outputs buffer and
 * write on their own schedule. `stop` flushes everything and closes files.
 */
export interface Output {
  description(): string;
  /**
   * Opens what it writes to. `onFailure` is told when that stops taking the samples (a write
   * error, or a file slower than the samples): the test should stop (output-file.ts).
   */
  start(onFailure?: (failure: PlateauError) => void): Promise<void>;
  addMetricSamples(containers: readonly SampleContainer[]): void;
  stop(): Promise<void>;
}
