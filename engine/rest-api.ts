// The subset of k6's REST API a harness reads during a run: GET /v1/status, /v1/metrics and
// /v1/metrics/{id}, in k6's JSON:API shape (k6's api/v1), served on --address.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConfigProblem } from '../contract/index.ts';
import type { TestRuntime } from './js/runtime.ts';
import type { Metric, Submetric } from './metrics/metric.ts';
import type { MetricRegistry } from './metrics/registry.ts';
import { CounterSink, GaugeSink, RateSink, type TrendSink } from './metrics/sinks.ts';

/**
 * k6's execution status, the number `GET /v1/status` answers in `status` (k6's
 * lib.ExecutionStatus, in order). Observed on k6 v0.49: 6 during setup(), 7 while the
 * scenarios run, 8 during teardown().
 */
export const EXECUTION_STATUS = {
  created: 0,
  initVUs: 1,
  initExecutors: 2,
  initDone: 3,
  pausedBeforeRun: 4,
  started: 5,
  setup: 6,
  running: 7,
  teardown: 8,
  ended: 9,
} as const;
export type ExecutionStatus = (typeof EXECUTION_STATUS)[keyof typeof EXECUTION_STATUS];

/** A `--address` value: `host:port` (`localhost:6565`, `127.0.0.1:0`, `[::1]:6565`, `:6565` for every interface). */
export interface RestAddress {
  host: string;
  port: number;
}

/**
 * Reads `--address` as k6 takes it, `host:port`; an empty host listens on every interface.
 * A value without a port, or a port outside 0..65535, is a problem (exit 104).
 */
export function parseRestAddress(
  text: string,
  problems: ConfigProblem[],
  setting = '--address',
): RestAddress | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]*):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port > 65_535) {
    problems.push({
      setting,
      message: `"${text}" is not host:port`,
      hint: 'e.g. --address 127.0.0.1:6565 (k6’s default is localhost:6565)',
    });
    return undefined;
  }
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

/** Where a run is, as `GET /v1/status` tells it. */
export interface RunStatus {
  status: ExecutionStatus;
  vus: number;
  vusMax: number;
  stopped: boolean;
}

/**
 * What the API reads: the metrics, where the run is, and its test time. One process's run
 * (runSource), or a test run by several workers, their metrics merged
 * (engine/workers/coordinator.ts).
 */
export interface RestApiSource {
  registry(): MetricRegistry;
  status(): RunStatus;
  /** Test time so far, ms: 0 before the clock starts. */
  elapsedMs(): number;
}

/** The API's source for a run in this process: its registry and runtime, and where it is. */
export function runSource(run: {
  registry: MetricRegistry;
  runtime: TestRuntime;
  status(): ExecutionStatus;
}): RestApiSource {
  const { registry, runtime } = run;
  return {
    registry: () => registry,
    status: () => ({
      status: run.status(),
      vus: runtime.vusActive,
      vusMax: runtime.vusInitialized,
      stopped: runtime.stopped,
    }),
    elapsedMs: () => (runtime.started ? performance.timeOrigin + performance.now() - runtime.startMs : 0),
  };
}

/** A listening REST API. */
export interface RestApi {
  /** Where it listens (the port chosen when 0 was asked). */
  readonly address: RestAddress;
  close(): Promise<void>;
}

/**
 * Starts the API on `address`. Rejects when it cannot listen (port taken, no such
 * interface): k6 then exits 106, and runTest does the same. Every answer is computed
 * when asked; nothing is collected between requests, so a harness that reads only the
 * counters it needs (`/v1/metrics/http_reqs`) costs the engine a few microseconds a read.
 */
export async function startRestApi(address: RestAddress, source: RestApiSource): Promise<RestApi> {
  const server: Server = createServer((req, res) => answer(req, res, source));
  server.keepAliveTimeout = 5000;
  server.listen(address.port, address.host === '' ? undefined : address.host);
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([error]) => Promise.reject(error)),
  ]);
  const bound = server.address() as AddressInfo;
  return {
    address: { host: address.host, port: bound.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(req: IncomingMessage, res: ServerResponse, source: RestApiSource): void {
  const [status, body] = route(req.method ?? 'GET', (req.url ?? '/').split('?')[0]!, source);
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function route(method: string, path: string, source: RestApiSource): [number, unknown] {
  if (method !== 'GET') return [405, errorBody('405', 'Method Not Allowed', 'only GET is served')];
  if (path === '/v1/status') return [200, { data: statusResource(source) }];
  if (path === '/v1/metrics') {
    const elapsedMs = source.elapsedMs();
    return [200, { data: observedMetrics(source.registry()).map((m) => metricResource(m, elapsedMs)) }];
  }
  if (path.startsWith('/v1/metrics/')) {
    const id = decodeURIComponent(path.slice('/v1/metrics/'.length));
    const metric = observedMetrics(source.registry()).find((m) => m.name === id);
    if (!metric) return [404, errorBody('404', 'Not Found', 'No metric with that ID was found')];
    return [200, { data: metricResource(metric, source.elapsedMs()) }];
  }
  return [404, errorBody('404', 'Not Found', 'not part of the engine’s REST API (docs/engine.md)')];
}

function errorBody(status: string, title: string, detail: string) {
  return { errors: [{ status, title, detail }] };
}

/** `GET /v1/status`'s resource, as k6 v0.49 answers it. */
export function statusResource(source: RestApiSource) {
  const { status, vus, vusMax, stopped } = source.status();
  return {
    type: 'status',
    id: 'default',
    attributes: {
      status,
      paused: false,
      vus,
      'vus-max': vusMax,
      stopped,
      running: status < EXECUTION_STATUS.ended,
      tainted: source
        .registry()
        .all()
        .some((m) => [m, ...m.submetrics].some((s) => s.thresholds.some((t) => t.failed))),
    },
  };
}

/** Metrics and sub-metrics that have had a sample: k6 lists no other (no `dropped_iterations` until one drops). */
function observedMetrics(registry: MetricRegistry): (Metric | Submetric)[] {
  const list: (Metric | Submetric)[] = [];
  for (const metric of registry.all()) {
    if (metric.observed) list.push(metric);
    for (const sub of metric.submetrics) if (!sub.sink.isEmpty) list.push(sub);
  }
  return list;
}

/**
 * One metric's resource. `sample` by type, as k6's sinks format it: counter `count` and
 * `rate` (per second of test time, `elapsedMs`); gauge `value`; rate `rate`; trend `avg`,
 * `max`, `med`, `min`, `p(90)`, `p(95)`, whole-run figures (a trend's percentiles walk its
 * histogram: microseconds, engine/metrics/sinks.ts). `tainted` is null without thresholds.
 */
export function metricResource(metric: Metric | Submetric, elapsedMs: number) {
  const parent = 'parent' in metric ? metric.parent : metric;
  return {
    type: 'metrics',
    id: metric.name,
    attributes: {
      type: parent.type,
      contains: parent.contains,
      tainted: metric.thresholds.length === 0 ? null : metric.thresholds.some((t) => t.failed),
      sample: sampleOf(metric.sink, elapsedMs),
    },
  };
}

function sampleOf(sink: Metric['sink'], elapsedMs: number): Record<string, number> {
  if (sink instanceof CounterSink)
    return { count: sink.count, rate: elapsedMs > 0 ? sink.count / (elapsedMs / 1000) : 0 };
  if (sink instanceof GaugeSink) return { value: sink.value };
  if (sink instanceof RateSink) return { rate: sink.rate };
  const trend = sink as TrendSink;
  return {
    avg: trend.avg,
    max: trend.max,
    med: trend.med,
    min: trend.min,
    'p(90)': trend.percentile(90),
    'p(95)': trend.percentile(95),
  };
}
