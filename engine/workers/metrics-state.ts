// A worker's metrics, checks and groups as data for the coordinator, and merged back into a
// registry: how N engine processes become one test's figures.
import type { CheckRecord, GroupRecord, TestRuntime } from '../js/runtime.ts';
import type { Metric } from '../metrics/metric.ts';
import type { MetricRegistry } from '../metrics/registry.ts';
import {
  type GaugeMerge,
  type MetricType,
  mergeSinkState,
  newSink,
  type SinkState,
  sinkState,
  TrendSink,
  type ValueKind,
} from '../metrics/sinks.ts';
import type { ThresholdConfig } from '../metrics/thresholds.ts';
import { BreakdownBlock, type ScenarioBreakdown } from '../output/scenario-breakdown.ts';

/**
 * What the coordinator needs to build a registry like every worker's: the metrics the
 * script defined, its thresholds as written, and whether k6's
 * `http_req_duration{expected_response:true}` exists (only while that system tag is on).
 */
export interface RegistryShape {
  metrics: { name: string; type: MetricType; contains: ValueKind }[];
  thresholds: Record<string, ThresholdConfig | ThresholdConfig[]>;
  expectedResponse: boolean;
}

/** One metric's sink and its sub-metrics' sinks, by their selector (`step:p002`). */
export interface MetricState {
  name: string;
  type: MetricType;
  contains: ValueKind;
  sink: SinkState;
  submetrics: { suffix: string; sink: SinkState }[];
}

/** A group of k6's root_group tree with its checks' counts. */
export interface GroupState {
  name: string;
  path: string;
  checks: CheckRecord[];
  groups: GroupState[];
}

/** A block of the full summary's per-scenario breakdown. */
export interface BlockState {
  metrics: { name: string; type: MetricType; contains: ValueKind; sink: SinkState }[];
  checks: { name: string; passes: number; fails: number }[];
  groups: { name: string; block: BlockState }[];
}

/**
 * How each gauge's last value combines across workers: the engine's own counts of what the
 * processes hold between them are summed (VUs, the engine's CPU in % of one core); anything
 * else takes the largest (the worst worker's lag; a script's own gauge).
 */
export function gaugeMergeOf(name: string): GaugeMerge {
  return name === 'vus' || name === 'vus_max' || name === 'engine_cpu_pct' ? 'sum' : 'max';
}

/** The registry's shape after the script's init and options (see RegistryShape). */
export function registryShape(
  registry: MetricRegistry,
  thresholds: RegistryShape['thresholds'],
): RegistryShape {
  const duration = registry.builtin('http_req_duration');
  return {
    metrics: registry.all().map((m) => ({ name: m.name, type: m.type, contains: m.contains })),
    thresholds,
    expectedResponse: duration.submetrics.some((s) => s.suffix === 'expected_response:true'),
  };
}

/** A registry built as every worker's was: the same metrics, sub-metrics and thresholds. */
export function registryFromShape(shape: RegistryShape, registry: MetricRegistry): MetricRegistry {
  for (const metric of shape.metrics) registry.define(metric.name, metric.type, metric.contains);
  if (!shape.expectedResponse) registry.forgetExpectedResponseSubmetric();
  registry.applyThresholds(shape.thresholds);
  return registry;
}

/**
 * Takes a worker's metrics as data, over and over: every sink with samples, a trend with
 * only the histogram pages changed since the last call (the receiver keeps the rest,
 * worker-mirror.ts). One per worker, for its whole run.
 */
export class MetricsSnapshotter {
  readonly #registry: MetricRegistry;
  /** Per trend sink: each page's total when it was last sent. */
  readonly #sent = new WeakMap<TrendSink, Map<number, number>>();

  constructor(registry: MetricRegistry) {
    this.#registry = registry;
  }

  /** The metrics (and sub-metrics) that have had a sample, trends as changes since the last call. */
  take(): MetricState[] {
    const states: MetricState[] = [];
    for (const metric of this.#registry.all()) {
      if (metric.sink.isEmpty) continue;
      states.push({
        name: metric.name,
        type: metric.type,
        contains: metric.contains,
        sink: sinkState(metric.sink, this.#sentOf(metric.sink)),
        submetrics: metric.submetrics
          .filter((sub) => !sub.sink.isEmpty)
          .map((sub) => ({ suffix: sub.suffix, sink: sinkState(sub.sink, this.#sentOf(sub.sink)) })),
      });
    }
    return states;
  }

  #sentOf(sink: Metric['sink']): Map<number, number> | undefined {
    if (!(sink instanceof TrendSink)) return undefined;
    let sent = this.#sent.get(sink);
    if (!sent) {
      sent = new Map();
      this.#sent.set(sink, sent);
    }
    return sent;
  }
}

/**
 * Adds whole metric states (every page of a trend) to `registry`: a metric it lacks is
 * defined, a sub-metric it lacks is left out (every worker has the same ones, from the same
 * thresholds). Marks each merged metric observed, as a sample would.
 */
export function mergeMetricStates(registry: MetricRegistry, states: readonly MetricState[]): void {
  for (const state of states) {
    const metric = registry.get(state.name) ?? registry.define(state.name, state.type, state.contains);
    const gauge = gaugeMergeOf(state.name);
    mergeSinkState(metric.sink, state.sink, gauge);
    metric.observed = true;
    for (const sub of state.submetrics) {
      const target = metric.submetrics.find((s) => s.suffix === sub.suffix);
      if (target) mergeSinkState(target.sink, sub.sink, gauge);
    }
  }
}

/** The root_group tree as data. */
export function groupState(group: GroupRecord): GroupState {
  return {
    name: group.name,
    path: group.path,
    checks: [...group.checks.values()].map((c) => ({ ...c })),
    groups: [...group.groups.values()].map(groupState),
  };
}

/** Adds another worker's groups and checks' counts to `runtime`'s tree (new ones after its own). */
export function mergeGroupState(runtime: TestRuntime, state: GroupState): void {
  const group = runtime.group(state.path);
  for (const check of state.checks) {
    const ours = group.checks.get(check.name);
    if (ours) {
      ours.passes += check.passes;
      ours.fails += check.fails;
    } else group.checks.set(check.name, { ...check });
  }
  for (const child of state.groups) mergeGroupState(runtime, child);
}

/** The full summary's per-scenario breakdown as data (whole trends). */
export function breakdownState(breakdown: ScenarioBreakdown): { name: string; block: BlockState }[] {
  return [...breakdown.scenarios].map(([name, block]) => ({ name, block: blockState(block) }));
}

function blockState(block: BreakdownBlock): BlockState {
  return {
    metrics: [...block.metrics].map(([name, m]) => ({
      name,
      type: m.type,
      contains: m.contains,
      sink: sinkState(m.sink),
    })),
    checks: [...block.checks].map(([name, c]) => ({ name, ...c })),
    groups: [...block.groups].map(([name, child]) => ({ name, block: blockState(child) })),
  };
}

/** Adds another worker's breakdown to `breakdown`. */
export function mergeBreakdownState(
  breakdown: ScenarioBreakdown,
  scenarios: readonly { name: string; block: BlockState }[],
): void {
  for (const { name, block } of scenarios) {
    let ours = breakdown.scenarios.get(name);
    if (!ours) {
      ours = new BreakdownBlock();
      breakdown.scenarios.set(name, ours);
    }
    mergeBlock(ours, block);
  }
}

function mergeBlock(ours: BreakdownBlock, state: BlockState): void {
  for (const metric of state.metrics) {
    let entry = ours.metrics.get(metric.name);
    if (!entry) {
      entry = { type: metric.type, contains: metric.contains, sink: newSink(metric.type) };
      ours.metrics.set(metric.name, entry);
    }
    mergeSinkState(entry.sink, metric.sink, gaugeMergeOf(metric.name));
  }
  for (const check of state.checks) {
    const counts = ours.checks.get(check.name);
    if (counts) {
      counts.passes += check.passes;
      counts.fails += check.fails;
    } else ours.checks.set(check.name, { passes: check.passes, fails: check.fails });
  }
  for (const { name, block } of state.groups) mergeBlock(ours.group(name), block);
}
