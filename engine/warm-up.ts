// A short rehearsal of the engine's hot path before the test clock starts.
//
// A cold Node process runs the per-request code (executor dispatch, iteration context,
// undici, the HTTP module, metric emission, CSV formatting) in V8's interpreter until it
// is hot enough to be compiled. At several thousand iterations per second that costs the
// first half second of a test: iterations start late, VUs stay busy, starts are dropped.
// k6, compiled ahead of time, does not pay it. The engine therefore runs the same code
// paths for a moment against a sink server of its own on 127.0.0.1, with a throwaway
// registry and outputs, so the test's first second runs on warm code. Nothing of the
// rehearsal reaches the script, the target or the run's outputs.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConstantArrivalRateScenario, ScenarioConfig } from './config/scenarios.ts';
import { createExecutor } from './executor/create-executor.ts';
import { VuFactory } from './executor/executor.ts';
import type { Logger } from './js/logger.ts';
import { createHttpModule } from './js/modules/http.ts';
import { TestRuntime } from './js/runtime.ts';
import { MetricRegistry } from './metrics/registry.ts';
import { CsvOutput } from './output/csv.ts';
import { ExecutionTuple } from './schedule/execution-segment.ts';

/** Below this peak arrival rate (iterations/s) a cold start costs nothing measurable. */
export const WARM_UP_MIN_RATE = 1000;

/**
 * The rehearsal: up to 8,000 iterations/s for one second, starting with 200 VUs and
 * growing as needed (a rehearsal has nothing to learn from dropping its own starts: every
 * start it runs warms the code). Measured at 10,000/s (bench/engine-accuracy.ts): without
 * it the first second dropped ~3,000 starts; with 4,000/s for 0.6 s 700–1,200; with 200
 * VUs at most 870–1,050; growing, 520–820. A 2.5 s rehearsal saved ~200 more: not worth
 * the wait. What is left is opening connections to the target, which a rehearsal must not
 * touch.
 */
const REHEARSAL = { maxRate: 8000, durationMs: 1000, vus: 200, maxVUs: 10_000 } as const;

/** The highest arrival rate (iterations/s) any arrival-rate scenario plans. */
export function peakArrivalRate(scenarios: readonly ScenarioConfig[]): number {
  let peak = 0;
  for (const s of scenarios) {
    if (s.executor === 'constant-arrival-rate') peak = Math.max(peak, (s.rate * 1e9) / s.timeUnitNs);
    if (s.executor === 'ramping-arrival-rate') {
      const most = Math.max(s.startRate, ...s.stages.map((stage) => stage.target));
      peak = Math.max(peak, (most * 1e9) / s.timeUnitNs);
    }
  }
  return peak;
}

const silent: Logger = { log: () => undefined };

/**
 * Runs a constant-arrival-rate rehearsal at up to `peakRate` through the real executor,
 * HTTP module, metric pipeline and CSV formatter against a local sink, then discards
 * everything it produced. Takes about a second.
 */
export async function rehearseHotPath(peakRate: number): Promise<{ iterations: number; ms: number }> {
  const started = performance.now();
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/warm-up`;
  const registry = new MetricRegistry();
  const csv = new CsvOutput({ fileName: '/dev/null', saveIntervalMs: 1000, timeFormat: 'unix' });
  const runtime = new TestRuntime({ registry, logger: silent, env: {}, runTags: {}, outputs: [csv] });
  const http = createHttpModule(runtime);
  try {
    await csv.start();
    runtime.startFlushing();
    const config: ConstantArrivalRateScenario = {
      name: 'warm-up',
      executor: 'constant-arrival-rate',
      startTimeNs: 0,
      gracefulStopNs: 1e9,
      exec: 'default',
      env: {},
      tags: {},
      rate: Math.round(Math.min(REHEARSAL.maxRate, peakRate)),
      timeUnitNs: 1e9,
      durationNs: REHEARSAL.durationMs * 1e6,
      preAllocatedVUs: REHEARSAL.vus,
      maxVUs: REHEARSAL.maxVUs,
    };
    const tuple = ExecutionTuple.create(undefined, undefined);
    const exec = async () => {
      const response = await http.module.default.asyncRequest('GET', url);
      return response.status;
    };
    const executor = createExecutor({ runtime, config, tuple, vus: new VuFactory(runtime, tuple), exec }, {});
    await executor.run();
    return { iterations: executor.stats.iterations, ms: performance.now() - started };
  } finally {
    runtime.stopFlushing();
    await csv.stop();
    await http.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
