import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TestRuntime } from '../js/runtime.ts';
import type { Metric } from '../metrics/metric.ts';
import { MetricRegistry } from '../metrics/registry.ts';
import type { TrendSink } from '../metrics/sinks.ts';
import { ScenarioBreakdown } from '../output/scenario-breakdown.ts';
import {
  breakdownState,
  gaugeMergeOf,
  groupState,
  MetricsSnapshotter,
  mergeBreakdownState,
  mergeGroupState,
  mergeMetricStates,
} from './metrics-state.ts';

function runtime(): TestRuntime {
  return new TestRuntime({
    registry: new MetricRegistry(),
    logger: { log: () => undefined },
    env: {},
    runTags: {},
    outputs: [],
  });
}

function check(rt: TestRuntime, path: string, name: string, passes: number, fails: number): void {
  rt.group(path).checks.set(name, { name, path: `${path}::${name}`, passes, fails });
}

test('checks add up by group and name across workers; a check only one worker met is kept', () => {
  const [ours, theirs] = [runtime(), runtime()];
  check(ours, '', 'status 200', 90, 10);
  check(ours, '::login', 'has token', 5, 0);
  check(theirs, '', 'status 200', 80, 20);
  check(theirs, '::login::mfa', 'code sent', 1, 1);
  mergeGroupState(ours, groupState(theirs.rootGroup));
  assert.deepEqual(ours.rootGroup.checks.get('status 200'), {
    name: 'status 200',
    path: '::status 200',
    passes: 170,
    fails: 30,
  });
  assert.equal(ours.group('::login').checks.get('has token')!.passes, 5);
  assert.deepEqual(ours.group('::login::mfa').checks.get('code sent'), {
    name: 'code sent',
    path: '::login::mfa::code sent',
    passes: 1,
    fails: 1,
  });
});

test('the full summary’s per-scenario breakdown merges metric by metric, group by group', () => {
  const registry = new MetricRegistry();
  const duration = registry.builtin('http_req_duration');
  const checks = registry.builtin('checks');
  const feed = (
    breakdown: ScenarioBreakdown,
    metrics: Metric[],
    values: number[],
    tags: Record<string, string>,
  ) => breakdown.add({ timeMs: 0, tags, metrics, values });
  const [ours, theirs] = [new ScenarioBreakdown(), new ScenarioBreakdown()];
  feed(ours, [duration], [10], { scenario: 'browse', group: '::cart' });
  feed(theirs, [duration], [30], { scenario: 'browse', group: '::cart' });
  feed(theirs, [checks], [0], { scenario: 'browse', group: '', check: 'ok' });
  feed(theirs, [duration], [5], { scenario: 'checkout', group: '' });
  mergeBreakdownState(ours, breakdownState(theirs));
  const browse = ours.scenarios.get('browse')!;
  const browseDuration = browse.metrics.get('http_req_duration')!.sink as TrendSink;
  assert.deepEqual([browseDuration.count, browseDuration.min, browseDuration.max], [2, 10, 30]);
  assert.equal((browse.groups.get('cart')!.metrics.get('http_req_duration')!.sink as TrendSink).count, 2);
  assert.deepEqual(browse.checks.get('ok'), { passes: 0, fails: 1 });
  assert.equal(
    (ours.scenarios.get('checkout')!.metrics.get('http_req_duration')!.sink as TrendSink).count,
    1,
  );
});

test('whole metric states merge into a registry; a metric it lacks is defined, observed', () => {
  const source = new MetricRegistry();
  source.define('queue_depth', 'gauge', 'default').ingest(7, {});
  source.builtin('engine_lag_ms').ingest(3, {});
  source.builtin('engine_cpu_pct').ingest(60, {});
  const target = new MetricRegistry();
  target.builtin('engine_lag_ms').ingest(1, {});
  target.builtin('engine_cpu_pct').ingest(55, {});
  mergeMetricStates(target, new MetricsSnapshotter(source).take());
  assert.equal(target.get('queue_depth')!.observed, true);
  assert.equal(
    (target.builtin('engine_lag_ms').sink as { value: number }).value,
    3,
    'the worst worker’s lag',
  );
  assert.equal(
    (target.builtin('engine_cpu_pct').sink as { value: number }).value,
    115,
    'the workers’ CPU together',
  );
  assert.deepEqual(['vus', 'vus_max', 'engine_cpu_pct', 'engine_lag_ms', 'my_gauge'].map(gaugeMergeOf), [
    'sum',
    'sum',
    'sum',
    'max',
    'max',
  ]);
});
