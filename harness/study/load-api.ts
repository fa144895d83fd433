// The load generator's own figures during a run, read through k6's REST API (real k6 and the
// embedded engine answer the same GET /v1/status and /v1/metrics/{id}).
import { createServer } from 'node:net';
import { request } from 'undici';

/** k6's execution status while the scenarios run (6 is setup, 8 teardown). */
export const STATUS_RUNNING = 7;

/** What the generator said at one moment. */
export interface LoadCounters {
  /** When it was read, on the harness's clock, ms. */
  atMs: number;
  /** k6's execution status (7: scenarios running). */
  status: number;
  /** VUs running an iteration now. */
  vus: number;
  /** Requests completed so far (`http_reqs` count). */
  httpReqs: number;
  /** Starts dropped so far (`dropped_iterations` count; k6 has no such metric until one drops). */
  droppedIterations: number;
}

/**
 * A loopback port that was free a moment ago, for `--address 127.0.0.1:<port>`: the harness
 * must name the port before the generator starts (k6 does not say which one it got). Another
 * process could take it in between; the generator then exits 106 and the study says so.
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The `count` of a `GET /v1/metrics/{id}` answer (k6's JSON:API shape); undefined otherwise. */
export function metricCount(body: unknown): number | undefined {
  const count = (body as { data?: { attributes?: { sample?: { count?: unknown } } } } | null)?.data
    ?.attributes?.sample?.count;
  return typeof count === 'number' ? count : undefined;
}

/** The `status` and `vus` of a `GET /v1/status` answer; undefined otherwise. */
export function statusOf(body: unknown): { status: number; vus: number } | undefined {
  const attributes = (body as { data?: { attributes?: { status?: unknown; vus?: unknown } } } | null)?.data
    ?.attributes;
  if (typeof attributes?.status !== 'number') return undefined;
  return { status: attributes.status, vus: typeof attributes.vus === 'number' ? attributes.vus : 0 };
}

/** A step's own figures from the generator: its requests' p95 (ms) and failure share. */
export interface StepFigures {
  p95Ms: number | null;
  failureRate: number | null;
}

/** A trend's `p(95)` from a `GET /v1/metrics/{id}` answer; undefined otherwise. */
export function metricP95(body: unknown): number | undefined {
  const sample = (body as { data?: { attributes?: { sample?: Record<string, unknown> } } } | null)?.data
    ?.attributes?.sample;
  const p95 = sample?.['p(95)'];
  return typeof p95 === 'number' ? p95 : undefined;
}

/** A rate's `rate` from a `GET /v1/metrics/{id}` answer; undefined otherwise. */
export function metricRate(body: unknown): number | undefined {
  const rate = (body as { data?: { attributes?: { sample?: { rate?: unknown } } } } | null)?.data?.attributes
    ?.sample?.rate;
  return typeof rate === 'number' ? rate : undefined;
}

/**
 * Reads the generator's REST API at `baseUrl` (`http://127.0.0.1:<port>`): three small
 * answers, never `GET /v1/metrics`, whose trends cost the generator a sort of every value.
 */
export class LoadApiClient {
  readonly #baseUrl: string;
  readonly #now: () => number;

  constructor(baseUrl: string, now: () => number = Date.now) {
    this.#baseUrl = baseUrl;
    this.#now = now;
  }

  /** The counters now; undefined while the API does not answer (not up yet, or the run ended). */
  async read(): Promise<LoadCounters | undefined> {
    try {
      const [status, reqs, dropped] = await Promise.all([
        this.#get('/v1/status'),
        this.#get('/v1/metrics/http_reqs'),
        this.#get('/v1/metrics/dropped_iterations'),
      ]);
      const state = statusOf(status.body);
      if (!state) return undefined;
      // 404: no sample yet (k6 lists a metric once it has one): zero so far.
      const count = (answer: { status: number; body: unknown }) =>
        answer.status === 404 ? 0 : metricCount(answer.body);
      const httpReqs = count(reqs);
      const droppedIterations = count(dropped);
      if (httpReqs === undefined || droppedIterations === undefined) return undefined;
      return { atMs: this.#now(), ...state, httpReqs, droppedIterations };
    } catch {
      return undefined;
    }
  }

  /**
   * The figures of the requests tagged `step` so far: the sub-metrics
   * `http_req_duration{step:<tag>}` and `http_req_failed{step:<tag>}` that a study's per-step
   * thresholds define (real k6 and the engine both serve them; a script without those
   * thresholds has none: null). A trend's read costs real k6 a sort of that step's values
   * only, so the probe reads each step's once, when it ends.
   */
  async stepFigures(step: string): Promise<StepFigures> {
    try {
      const [duration, failed] = await Promise.all([
        this.#get(`/v1/metrics/${encodeURIComponent(`http_req_duration{step:${step}}`)}`),
        this.#get(`/v1/metrics/${encodeURIComponent(`http_req_failed{step:${step}}`)}`),
      ]);
      return {
        p95Ms: duration.status === 200 ? (metricP95(duration.body) ?? null) : null,
        failureRate: failed.status === 200 ? (metricRate(failed.body) ?? null) : null,
      };
    } catch {
      return { p95Ms: null, failureRate: null };
    }
  }

  async #get(path: string): Promise<{ status: number; body: unknown }> {
    const res = await request(`${this.#baseUrl}${path}`, { headersTimeout: 2000, bodyTimeout: 2000 });
    return { status: res.statusCode, body: await res.body.json().catch(() => undefined) };
  }
}
