// Results per scenario and per group inside it, for `--summary-mode full` (k6 v1's SCENARIO
// and GROUP sections). Fed every sample while the test runs; only in full mode, as it keeps
// a second set of sinks per scenario and per group (a trend's is a bounded histogram).
import type { SampleContainer } from '../metrics/metric.ts';
import { type MetricType, newSink, type ValueKind } from '../metrics/sinks.ts';

/** One metric's aggregate within a scenario or group. */
export interface BreakdownMetric {
  readonly type: MetricType;
  readonly contains: ValueKind;
  readonly sink: ReturnType<typeof newSink>;
}

/** A scenario's (or a group's) results: its metrics, checks in first-seen order, inner groups. */
export class BreakdownBlock {
  readonly metrics = new Map<string, BreakdownMetric>();
  readonly checks = new Map<string, { passes: number; fails: number }>();
  readonly groups = new Map<string, BreakdownBlock>();

  add(container: SampleContainer): void {
    const { metrics, values } = container;
    for (let i = 0; i < metrics.length; i++) {
      const metric = metrics[i]!;
      let entry = this.metrics.get(metric.name);
      if (!entry) {
        entry = { type: metric.type, contains: metric.contains, sink: newSink(metric.type) };
        this.metrics.set(metric.name, entry);
      }
      entry.sink.add(values[i]!);
      const check = container.tags.check;
      if (metric.name === 'checks' && check !== undefined) {
        let counts = this.checks.get(check);
        if (!counts) {
          counts = { passes: 0, fails: 0 };
          this.checks.set(check, counts);
        }
        if (values[i]) counts.passes++;
        else counts.fails++;
      }
    }
  }

  group(name: string): BreakdownBlock {
    let block = this.groups.get(name);
    if (!block) {
      block = new BreakdownBlock();
      this.groups.set(name, block);
    }
    return block;
  }
}

/**
 * Samples by their `scenario` tag, and within a scenario by their `group` tag (`::a::b`):
 * a scenario's block holds all its samples, each group's block those made inside it,
 * inner groups included. Samples without a scenario (setup, teardown, vus) are left out,
 * as k6 leaves them out of its scenario sections.
 */
export class ScenarioBreakdown {
  readonly scenarios = new Map<string, BreakdownBlock>();

  add(container: SampleContainer): void {
    const scenario = container.tags.scenario;
    if (scenario === undefined) return;
    let block = this.scenarios.get(scenario);
    if (!block) {
      block = new BreakdownBlock();
      this.scenarios.set(scenario, block);
    }
    block.add(container);
    const group = container.tags.group;
    if (!group) return;
    for (const name of group.split('::').slice(1)) {
      block = block.group(name);
      block.add(container);
    }
  }
}
