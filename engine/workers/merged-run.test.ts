import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetricRegistry } from '../metrics/registry.ts';
import type { RateSink, TrendSink } from '../metrics/sinks.ts';
import { evaluateThresholds } from '../metrics/threshold-evaluator.ts';
import { EXECUTION_STATUS } from '../rest-api.ts';
import { MergedRun, mergeProgress } from './merged-run.ts';
import { MetricsSnapshotter, type RegistryShape, registryFromShape, registryShape } from './metrics-state.ts';

const SHAPE_THRESHOLDS: RegistryShape['thresholds'] = {
  http_req_failed: ['rate<0.1'],
  'http_req_duration{step:a}': ['p(95)<200'],
  think_ms: ['max<1000'],
};

/** A worker's registry: the script's custom trend, its thresholds. */
function workerRegistry(): MetricRegistry {
  const registry = new MetricRegistry();
  registry.define('think_ms', 'trend', 'time');
  registry.applyThresholds(SHAPE_THRESHOLDS);
  return registry;
}

/** One request's samples, as the engine ingests them. */
function request(registry: MetricRegistry, durationMs: number, failed: boolean, step: string): void {
  const tags = { step, expected_response: String(!failed) };
  registry.builtin('http_reqs').ingest(1, tags);
  registry.builtin('http_req_duration').ingest(durationMs, tags);
  registry.builtin('http_req_failed').ingest(failed ? 1 : 0, tags);
  registry.get('think_ms')!.ingest(durationMs / 2, tags);
}

test('snapshots of two workers, trends sent as changed pages, merge into the one test a single process would have measured', () => {
  const workers = [workerRegistry(), workerRegistry()];
  const alone = workerRegistry();
  const snapshotters = workers.map((r) => new MetricsSnapshotter(r));
  const run = new MergedRun(registryShape(workers[0]!, SHAPE_THRESHOLDS), 2);
  let i = 0;
  for (let round = 0; round < 4; round++) {
    for (let n = 0; n < 500; n++, i++) {
      // Worker 1 fails a third of its requests; worker 0 none: 1 in 6 over the test.
      const worker = i % 2;
      const failed = worker === 1 && i % 3 === 0;
      const duration = 5 + ((i * 37) % 400);
      const step = round < 2 ? 'a' : 'b';
      request(workers[worker]!, duration, failed, step);
      request(alone, duration, failed, step);
      workers[worker]!.builtin('vus').ingest(10 + worker, {});
    }
    snapshotters.forEach((s, index) => {
      run.apply(index, {
        metrics: s.take(),
        status: EXECUTION_STATUS.running,
        vus: 3,
        vusMax: 8,
        progress: undefined,
      });
    });
  }
  const merged = run.registry();
  const trend = (r: MetricRegistry, name: string) => r.get(name)!.sink as TrendSink;
  assert.equal((merged.get('http_reqs')!.sink as { count: number }).count, 2000);
  for (const name of ['http_req_duration', 'think_ms']) {
    for (const p of [50, 90, 95, 99]) {
      assert.equal(trend(merged, name).percentile(p), trend(alone, name).percentile(p), `${name} p(${p})`);
    }
    assert.equal(trend(merged, name).max, trend(alone, name).max);
  }
  const stepA = (r: MetricRegistry) =>
    r.builtin('http_req_duration').submetrics.find((s) => s.suffix === 'step:a')!.sink as TrendSink;
  assert.equal(stepA(merged).count, 1000, 'the sub-metric of a threshold, merged');
  assert.equal(stepA(merged).percentile(95), stepA(alone).percentile(95));
  const failures = (r: MetricRegistry) => (r.get('http_req_failed')!.sink as RateSink).passes;
  assert.equal(failures(merged), 333, 'the odd i ≡ 3 (mod 6) below 2,000');
  assert.equal(failures(alone), 333);
  assert.equal(merged.builtin('vus').sink.isEmpty, false);
  assert.equal((merged.builtin('vus').sink as { value: number }).value, 21, 'VUs: each worker’s, summed');

  // Judged over the whole test: 1 in 6 failed, so rate<0.1 is crossed, as in one process;
  // worker 0 alone would pass it.
  const crossed = (r: MetricRegistry) => {
    evaluateThresholds(r, 4000, false);
    return r
      .all()
      .flatMap((m) => [m, ...m.submetrics])
      .filter((m) => m.thresholds.some((t) => t.failed))
      .map((m) => m.name);
  };
  assert.deepEqual(crossed(merged), ['http_req_duration{step:a}', 'http_req_failed']);
  assert.deepEqual(crossed(merged), crossed(alone));
  assert.deepEqual(crossed(workers[0]!), ['http_req_duration{step:a}'], 'worker 0 alone failed nothing');
  assert.deepEqual(run.status(), { status: EXECUTION_STATUS.running, vus: 6, vusMax: 16 });
});

test('a registry shape rebuilds the script’s metrics, sub-metrics and thresholds; its status waits for every worker', () => {
  const source = workerRegistry();
  source.forgetExpectedResponseSubmetric();
  const shape = registryShape(source, SHAPE_THRESHOLDS);
  assert.equal(shape.expectedResponse, false);
  const rebuilt = registryFromShape(shape, new MetricRegistry());
  const names = (r: MetricRegistry) => r.all().flatMap((m) => [m.name, ...m.submetrics.map((s) => s.name)]);
  assert.deepEqual(names(rebuilt), names(source));
  assert.equal(rebuilt.get('think_ms')!.thresholds[0]!.source, 'max<1000');
  const run = new MergedRun(shape, 2);
  run.apply(0, { metrics: [], status: EXECUTION_STATUS.setup, vus: 0, vusMax: 4, progress: undefined });
  assert.equal(run.status().status, EXECUTION_STATUS.initVUs, 'one worker not heard from yet');
  run.apply(1, { metrics: [], status: EXECUTION_STATUS.running, vus: 2, vusMax: 4, progress: undefined });
  assert.deepEqual(run.status(), { status: EXECUTION_STATUS.setup, vus: 2, vusMax: 8 });
});

test('progress: each scenario as far as its slowest worker, VUs and counts summed', () => {
  const progress = mergeProgress(
    [
      {
        elapsedMs: 900,
        scenarios: [{ name: 'load', progress: 0.5, active: 3, maxVUs: 10, iterations: 40, dropped: 1 }],
      },
      {
        elapsedMs: 950,
        scenarios: [
          { name: 'load', progress: 0.48, active: 2, maxVUs: 10, iterations: 38, dropped: 0 },
          { name: 'late', progress: 0, active: 0, maxVUs: 2, iterations: 0, dropped: 0 },
        ],
      },
    ],
    1000,
  );
  assert.deepEqual(progress, {
    elapsedMs: 1000,
    scenarios: [
      { name: 'load', progress: 0.48, active: 5, maxVUs: 20, iterations: 78, dropped: 1 },
      { name: 'late', progress: 0, active: 0, maxVUs: 2, iterations: 0, dropped: 0 },
    ],
  });
});
