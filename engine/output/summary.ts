// The end-of-test summary: handleSummary's data, the --summary-export file, the text report.
import { createHash } from 'node:crypto';
import type { GroupRecord, TestRuntime } from '../js/runtime.ts';
import type { Metric, Submetric } from '../metrics/metric.ts';
import { CounterSink, GaugeSink, RateSink, type TrendSink } from '../metrics/sinks.ts';
import { aggregate } from '../metrics/thresholds.ts';

/** A metric in handleSummary's data (k6's default, legacy-shaped summary). */
export interface SummaryMetric {
  type: string;
  contains: string;
  values: Record<string, number>;
  thresholds?: Record<string, { ok: boolean }>;
}

interface SummaryCheck {
  name: string;
  path: string;
  id: string;
  passes: number;
  fails: number;
}

interface SummaryGroup {
  name: string;
  path: string;
  id: string;
  groups: SummaryGroup[];
  checks: SummaryCheck[];
}

/** The object handleSummary(data) receives. */
export interface SummaryData {
  root_group: SummaryGroup;
  options: { summaryTrendStats: string[]; summaryTimeUnit: string; noColor: boolean };
  state: { isStdOutTTY: boolean; isStdErrTTY: boolean; testRunDurationMs: number };
  metrics: Record<string, SummaryMetric>;
  setup_data?: unknown;
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

/** A trend statistic: the threshold aggregations (avg, min, med, max, p(N)) plus count. */
function trendValue(sink: TrendSink, stat: string): number {
  return stat === 'count' ? sink.count : (aggregate(sink, stat, 0) ?? 0);
}

/** A sink's values as the summary gives them: count and rate, value/min/max, rate, or trend statistics. */
export function sinkValues(
  sink: Metric['sink'],
  trendStats: string[],
  durationSeconds: number,
): Record<string, number> {
  if (sink instanceof CounterSink)
    return { count: sink.count, rate: durationSeconds > 0 ? sink.count / durationSeconds : 0 };
  if (sink instanceof GaugeSink) return { value: sink.value, min: sink.min, max: sink.max };
  if (sink instanceof RateSink) return { rate: sink.rate, passes: sink.passes, fails: sink.fails };
  return Object.fromEntries(trendStats.map((stat) => [stat, trendValue(sink, stat)]));
}

function group(record: GroupRecord): SummaryGroup {
  return {
    name: record.name,
    path: record.path,
    id: md5(record.path),
    groups: [...record.groups.values()].map(group),
    checks: [...record.checks.values()].map((c) => ({ ...c, id: md5(c.path) })),
  };
}

/**
 * Builds handleSummary's data: every metric that received samples, and every metric or
 * sub-metric with thresholds (evaluated, even when empty), in registry order.
 */
export function buildSummaryData(
  runtime: TestRuntime,
  trendStats: string[],
  durationMs: number,
  summaryTimeUnit = '',
): SummaryData {
  const metrics: Record<string, SummaryMetric> = {};
  const seconds = durationMs / 1000;
  const add = (m: Metric | Submetric, parent: Metric) => {
    const entry: SummaryMetric = {
      type: parent.type,
      contains: parent.contains,
      values: sinkValues(m.sink, trendStats, seconds),
    };
    if (m.thresholds.length > 0) {
      entry.thresholds = Object.fromEntries(m.thresholds.map((t) => [t.source, { ok: !t.failed }]));
    }
    metrics[m.name] = entry;
  };
  for (const metric of runtime.registry.all()) {
    if (!metric.sink.isEmpty || metric.thresholds.length > 0) add(metric, metric);
    for (const sub of metric.submetrics) if (!sub.sink.isEmpty || sub.thresholds.length > 0) add(sub, metric);
  }
  const data: SummaryData = {
    root_group: group(runtime.rootGroup),
    options: { summaryTrendStats: trendStats, summaryTimeUnit, noColor: false },
    state: {
      isStdOutTTY: process.stdout.isTTY === true,
      isStdErrTTY: process.stderr.isTTY === true,
      testRunDurationMs: durationMs,
    },
    metrics,
  };
  if (runtime.setupData !== undefined) data.setup_data = runtime.setupData;
  return data;
}

/**
 * The `--summary-export` file: data without options/state, each metric flattened to its
 * values (a rate's `rate` renamed `value`), thresholds as `{expr: failed}` (true = FAILED),
 * groups and checks as objects keyed by name. Pretty-printed with 4 spaces like k6.
 */
export function summaryExport(data: SummaryData): string {
  const flatGroup = (g: SummaryGroup): unknown => ({
    name: g.name,
    path: g.path,
    id: g.id,
    groups: Object.fromEntries(g.groups.map((child) => [child.name, flatGroup(child)])),
    checks: Object.fromEntries(g.checks.map((c) => [c.name, c])),
  });
  const metrics: Record<string, unknown> = {};
  for (const [name, metric] of Object.entries(data.metrics)) {
    const flat: Record<string, unknown> = { ...metric.values };
    if (metric.type === 'rate') {
      flat.value = flat.rate;
      delete flat.rate;
    }
    if (metric.thresholds) {
      flat.thresholds = Object.fromEntries(
        Object.entries(metric.thresholds).map(([expr, r]) => [expr, !r.ok]),
      );
    }
    metrics[name] = flat;
  }
  const out: Record<string, unknown> = { root_group: flatGroup(data.root_group), metrics };
  if (data.setup_data !== undefined) out.setup_data = data.setup_data;
  return `${JSON.stringify(out, null, 4)}\n`;
}
