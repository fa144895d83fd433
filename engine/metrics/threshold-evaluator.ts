// Evaluates every threshold of a run: every 2 s while it runs, and once at the end.
import type { Metric, Submetric } from './metric.ts';
import type { MetricRegistry } from './registry.ts';
import { aggregate, holds, type Threshold } from './thresholds.ts';

/** The result of one evaluation pass. */
export interface ThresholdVerdict {
  /** Some threshold is crossed. */
  anyFailed: boolean;
  /** A crossed abortOnFail threshold whose delay has passed, with its metric name. */
  abort: { metric: string; threshold: Threshold } | undefined;
}

/**
 * Evaluates every threshold against its (sub-)metric. While running, metrics without
 * samples are skipped; at the end they are evaluated too (an empty trend reads 0, an empty
 * rate has no rate and passes), as k6 does.
 */
export function evaluateThresholds(
  registry: MetricRegistry,
  elapsedMs: number,
  final: boolean,
): ThresholdVerdict {
  let anyFailed = false;
  let abort: ThresholdVerdict['abort'];
  const check = (target: Metric | Submetric) => {
    if (target.thresholds.length === 0) return;
    if (!final && target.sink.isEmpty) return;
    for (const threshold of target.thresholds) {
      const value = aggregate(target.sink, threshold.aggregation, elapsedMs / 1000);
      threshold.failed = value !== undefined && !holds(value, threshold.operator, threshold.bound);
      if (!threshold.failed) continue;
      anyFailed = true;
      if (!final && threshold.abortOnFail && elapsedMs * 1e6 >= threshold.delayAbortEvalNs && !abort) {
        abort = { metric: target.name, threshold };
      }
    }
  };
  for (const metric of registry.all()) {
    check(metric);
    for (const sub of metric.submetrics) check(sub);
  }
  return { anyFailed, abort };
}
