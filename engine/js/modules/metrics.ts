// The `k6/metrics` module: Counter, Gauge, Rate, Trend.
import type { Metric } from '../../metrics/metric.ts';
import type { MetricType } from '../../metrics/sinks.ts';
import type { TestRuntime } from '../runtime.ts';

/** Builds `k6/metrics` for a run. Custom metrics must be created in the init context. */
export function createMetricsModule(runtime: TestRuntime) {
  const make = (type: MetricType) =>
    class CustomMetric {
      readonly name: string;
      readonly #metric: Metric;
      constructor(name: string, isTime = false) {
        if (runtime.current()) {
          throw new Error(`metric "${name}" must be created in the init context, not inside a VU`);
        }
        this.#metric = runtime.registry.define(name, type, isTime ? 'time' : 'default');
        this.name = name;
      }
      add(value: number | boolean, tags: Record<string, unknown> = {}): boolean {
        const context = runtime.current();
        if (context?.interrupted) return false;
        const numeric = typeof value === 'boolean' ? (value ? 1 : 0) : Number(value);
        if (!Number.isFinite(numeric)) {
          runtime.warnOnce(`nan:${this.name}`, `${this.name}.add(${String(value)}) ignored: not a number`);
          return false;
        }
        const extra = Object.fromEntries(Object.entries(tags ?? {}).map(([k, v]) => [k, String(v)]));
        // Assigned, not spread: a spread with tags gave each sample a hidden class of its own
        // (see checkTags in k6.ts).
        const sampleTags = runtime.contextTags(context);
        Object.assign(sampleTags, extra);
        runtime.emit(this.#metric, numeric, sampleTags, undefined, runtime.sampleMetadata(context));
        return true;
      }
    };
  const Counter = make('counter');
  const Gauge = make('gauge');
  const Rate = make('rate');
  const Trend = make('trend');
  const exports = { Counter, Gauge, Rate, Trend };
  return { default: exports, ...exports };
}
