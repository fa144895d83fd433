// All metrics of a test run, built-in and custom, with their sub-metrics and thresholds.
import { type ConfigProblem, PlateauError } from '../../contract/index.ts';
import { BUILTIN_METRICS, type BuiltinMetricName } from './builtin.ts';
import { Metric, Submetric } from './metric.ts';
import type { MetricType, ValueKind } from './sinks.ts';
import { parseSelector, parseThreshold, type ThresholdConfig } from './thresholds.ts';

const METRIC_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/;

/** Holds every metric by name; k6's metrics.Registry. */
export class MetricRegistry {
  readonly #metrics = new Map<string, Metric>();

  constructor() {
    for (const [name, [type, contains]] of Object.entries(BUILTIN_METRICS)) {
      this.#metrics.set(name, new Metric(name, type, contains));
    }
    // k6 always registers this sub-metric, so it shows in summaries.
    this.#submetric(this.builtin('http_req_duration'), 'expected_response:true', [
      ['expected_response', 'true'],
    ]);
  }

  /** Drops the sub-metric k6 registers only while the expected_response system tag is on. */
  forgetExpectedResponseSubmetric(): void {
    const duration = this.builtin('http_req_duration');
    const index = duration.submetrics.findIndex((sub) => sub.suffix === 'expected_response:true');
    if (index >= 0) duration.submetrics.splice(index, 1);
  }

  builtin(name: BuiltinMetricName): Metric {
    return this.#metrics.get(name)!;
  }

  get(name: string): Metric | undefined {
    return this.#metrics.get(name);
  }

  all(): Metric[] {
    return [...this.#metrics.values()];
  }

  /**
   * Registers a custom metric, or returns the existing one of the same type. Throws when
   * the name is invalid or already used with another type.
   */
  define(name: string, type: MetricType, contains: ValueKind): Metric {
    if (!METRIC_NAME.test(name)) {
      throw new Error(
        `invalid metric name "${name}": use letters, digits and _, starting with a letter or _`,
      );
    }
    const existing = this.#metrics.get(name);
    if (existing) {
      if (existing.type !== type) {
        throw new Error(`metric "${name}" already exists as a ${existing.type}; it cannot also be a ${type}`);
      }
      return existing;
    }
    const metric = new Metric(name, type, contains);
    this.#metrics.set(name, metric);
    return metric;
  }

  /**
   * Attaches the script's thresholds. Every bad entry is reported at once in one
   * PlateauError (exit 104). Thresholds on metrics that do not exist are an error, as in k6.
   * Returns warnings for thresholds that can never match (on `vu`/`iter`), for the log.
   */
  applyThresholds(config: Record<string, ThresholdConfig | ThresholdConfig[]>): string[] {
    const problems: ConfigProblem[] = [];
    const warnings: string[] = [];
    for (const [key, raw] of Object.entries(config)) {
      const selector = parseSelector(key);
      if (selector && 'setting' in selector) {
        problems.push(selector);
        continue;
      }
      const metricName = selector ? selector.metric : key.trim();
      const metric = this.#metrics.get(metricName);
      if (!metric) {
        problems.push({
          setting: `thresholds["${key}"]`,
          message: `metric "${metricName}" does not exist`,
          hint: 'use a built-in metric name or define the custom metric in the init code',
        });
        continue;
      }
      for (const [tag] of selector?.tags ?? []) {
        if (tag === 'vu' || tag === 'iter') {
          warnings.push(
            `thresholds["${key}"]: ${tag} is sample metadata, not a tag, so this threshold matches no sample (as in k6)`,
          );
        }
      }
      const target = selector ? this.#submetric(metric, selector.suffix, selector.tags) : metric;
      for (const entry of Array.isArray(raw) ? raw : [raw]) {
        const parsed = parseThreshold(key, metric.type, entry);
        if ('setting' in parsed) problems.push(parsed);
        else target.thresholds.push(parsed);
      }
    }
    if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'thresholds');
    return warnings;
  }

  #submetric(metric: Metric, suffix: string, tags: [string, string][]): Submetric {
    const existing = metric.submetrics.find((s) => s.suffix === suffix);
    if (existing) return existing;
    const sub = new Submetric(metric, suffix, tags);
    metric.submetrics.push(sub);
    return sub;
  }
}
