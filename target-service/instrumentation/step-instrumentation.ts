// One object that instruments a Node HTTP service with a pg pool the way plateau measures.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type pg from 'pg';
import type { ExpireReason, ServiceSettings, ShedReason } from '../../contract/index.ts';
import {
  AdmissionGate,
  type AdmissionGateSettings,
  type AdmissionSignalKind,
  eventLoopDelaySignal,
  eventLoopUtilizationSignal,
} from './admission-gate.ts';
import {
  DatabaseBreaker,
  type DatabaseBreakerSettings,
  type DatabaseProbe,
  type DatabaseTransition,
} from './database-breaker.ts';
import { isDatabaseUnavailable } from './database-errors.ts';
import { ServiceMetrics } from './metrics.ts';
import { instrumentPool, type PoolProbe } from './pool-instrumentation.ts';
import { type Clock, type ProcessProbe, systemLoopDelayMonitor } from './process-probe.ts';
import { RequestTrace, type TraceSink } from './request-trace.ts';
import { StepRecorder } from './step-recorder.ts';
import { currentTrace, runWithTrace } from './trace-context.ts';

/** Options for {@link StepInstrumentation}. */
export interface StepInstrumentationOptions {
  /** Name reported in `/steps`, e.g. `statement-api`. */
  service: string;
  /** The node-postgres pool whose connections are the resource under study. */
  pool: pg.Pool;
  /** The settings analysis needs (at least `poolMax`). */
  settings: ServiceSettings;
  /** Where structured log lines go; default stderr. */
  log?: (line: string) => void;
  /** false turns every measurement into a no-op (for measuring what instrumentation costs). */
  enabled?: boolean;
  clock?: Clock;
  probe?: ProcessProbe;
  /** Least time between two `pool_saturated` log lines, ms; default 5000. */
  saturationLogIntervalMs?: number;
  /**
   * An admission gate on event-loop delay (see {@link AdmissionGate}); none by default. While
   * it is busy, {@link StepInstrumentation.admit} refuses new requests.
   */
  admission?: AdmissionGateSettings & { signal: AdmissionSignalKind };
  /**
   * A circuit breaker on the database (see {@link DatabaseBreaker}): `probe` tries a
   * connection of its own. With it, {@link StepInstrumentation.databaseAvailable} refuses
   * requests while the database is unreachable, and `/steps`, the timeline, `/steps/live`,
   * `/metrics` and the log report the outage. None by default.
   */
  database?: DatabaseBreakerSettings & { probe: DatabaseProbe };
}

/** HTTP status recorded when the client went away before the response was complete. */
export const CLIENT_CLOSED_STATUS = 499;

const NOOP_SINK: TraceSink = {
  recordWait() {},
  recordQuery() {},
  recordDatabase() {},
  recordShed() {},
  recordUnavailable() {},
  recordExpire() {},
  recordSaturated() {},
  recordFinish() {},
  now: () => 0,
};

/**
 * Per-step instrumentation for a Node HTTP service backed by a node-postgres pool:
 * `GET /steps`, `POST /steps/reset` and `GET /metrics`, fed from the pool's own events
 * and from each request's X-Load-Step header.
 *
 * ```ts
 * const steps = new StepInstrumentation({ service: 'orders', pool, settings });
 * http.createServer((req, res) => {
 *   if (steps.handleAdminRoute(req, res)) return;
 *   const trace = steps.traceRequest(req, res);
 *   steps.run(trace, () => handle(req, res)); // pool.connect()/query inside are attributed
 * });
 * ```
 */
export class StepInstrumentation {
  readonly recorder: StepRecorder;
  readonly metrics: ServiceMetrics | undefined;
  readonly enabled: boolean;
  /** The admission gate, when the service has one. */
  readonly gate: AdmissionGate | undefined;
  /** The database's circuit breaker, when the service has one. */
  readonly breaker: DatabaseBreaker | undefined;
  readonly #pool: pg.Pool;
  readonly #probe: PoolProbe | undefined;
  readonly #log: (line: string) => void;
  readonly #logIntervalMs: number;
  #saturatedTotal = 0;
  #lastSaturationLogMs = Number.NEGATIVE_INFINITY;
  #gateSignal: { close(): void } | undefined;
  /** Refusals for want of the database since it was last found unreachable, for the log. */
  #refusedSinceDown = 0;

  constructor(options: StepInstrumentationOptions) {
    this.enabled = options.enabled ?? true;
    this.#pool = options.pool;
    this.#log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.#logIntervalMs = options.saturationLogIntervalMs ?? 5000;
    // The gate protects the service whether or not it is measured (INSTRUMENT=off keeps it).
    const signalName = options.admission?.signal === 'utilization' ? 'loopBusyPct' : 'loopDelayMs';
    const gate = options.admission
      ? new AdmissionGate(options.admission, (t) => {
          this.#log(
            `ts=${new Date(this.recorder.now()).toISOString()} level=${t.to === 'busy' ? 'warn' : 'info'} event=admission_${t.to} ${signalName}=${t.signal.toFixed(1)} ${t.to === 'busy' ? 'high' : 'low'}=${t.threshold}`,
          );
          this.metrics?.admissionTransitions.inc({ to: t.to });
        })
      : undefined;
    this.gate = gate;
    // Like the gate, the breaker protects the service whether or not it is measured.
    this.breaker = options.database
      ? new DatabaseBreaker(options.database, options.database.probe, (t) => this.#databaseTransition(t))
      : undefined;
    this.recorder = new StepRecorder({
      service: options.service,
      settings: options.settings,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.probe ? { probe: options.probe } : {}),
      ...(this.enabled ? { loopDelay: systemLoopDelayMonitor() } : {}),
      ...(gate ? { admission: () => gate.state } : {}),
      watchesDatabase: this.breaker !== undefined,
    });
    if (this.enabled) {
      this.#probe = instrumentPool(options.pool, this.recorder, {
        beforeConnect: () => this.#checkSaturation(currentTrace()),
      });
      const probe = this.#probe;
      this.metrics = new ServiceMetrics(options.pool, () => probe.checkedOut, {
        poolMax: options.settings.poolMax,
        queueMax: options.settings.queueMax,
        gate,
        breaker: this.breaker,
      });
      this.recorder.startTicking();
    }
    if (gate) {
      const signal =
        options.admission?.signal === 'utilization'
          ? eventLoopUtilizationSignal()
          : eventLoopDelaySignal(gate.settings.sampleMs);
      this.#gateSignal = signal;
      gate.start(signal.read);
    }
  }

  /**
   * Asks the admission gate whether `trace`'s request may come in. No gate, or a gate in
   * `normal`: true. A busy gate: the request is recorded as shed (reason `admission`) and
   * false is returned; answer 503 + Retry-After before doing any work for it.
   */
  admit(trace: RequestTrace): boolean {
    if (!this.gate || this.gate.admit()) return true;
    this.shed(trace, 'admission');
    return false;
  }

  /**
   * Asks the database's breaker whether `trace`'s request may use the database. No breaker,
   * or the database up: true. Down: the request is recorded as refused (reason `database`)
   * and false is returned; answer 503 + Retry-After at once, before any work.
   */
  databaseAvailable(trace: RequestTrace): boolean {
    if (!this.breaker || this.breaker.allow()) return true;
    this.unavailable(trace);
    return false;
  }

  /**
   * Reports an error from the database: from `trace`'s request (its `pool.connect()` or
   * query), or from no request (a pool client's `'error'` event). When it means the
   * database is out of reach (`isDatabaseUnavailable`), the request is recorded as refused
   * for the database, the breaker probes, and true is returned: answer 503 + Retry-After.
   * False for any other error, which is the caller's to handle (a defect: 500).
   */
  databaseFailed(error: unknown, trace?: RequestTrace): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    if (trace) this.unavailable(trace);
    this.breaker?.suspect();
    return true;
  }

  /** Records a refusal for want of the database (before answering 503 + Retry-After). */
  unavailable(trace: RequestTrace): void {
    this.#refusedSinceDown++;
    if (!this.enabled) return;
    trace.unavailable('database');
    this.metrics!.unavailable.inc({ reason: 'database' });
  }

  /**
   * Answers `GET /steps`, `GET /steps/live`, `POST /steps/reset` and `GET /metrics`; returns false for any
   * other request so the caller handles it.
   */
  handleAdminRoute(req: IncomingMessage, res: ServerResponse): boolean {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/steps' && req.method === 'GET') {
      sendJson(res, 200, this.recorder.report());
      return true;
    }
    if (path === '/steps/live' && req.method === 'GET') {
      sendJson(res, 200, this.recorder.live());
      return true;
    }
    if (path === '/steps/reset' && req.method === 'POST') {
      this.recorder.reset();
      sendJson(res, 200, { reset: true });
      return true;
    }
    if (path === '/metrics' && req.method === 'GET') {
      if (!this.metrics) {
        sendJson(res, 404, { error: 'metrics are off (instrumentation disabled)' });
        return true;
      }
      this.metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': this.metrics!.registry.contentType });
          res.end(text);
        },
        (error: unknown) => sendJson(res, 500, { error: String(error) }),
      );
      return true;
    }
    if (path === '/steps' || path === '/steps/live' || path === '/steps/reset' || path === '/metrics') {
      sendJson(res, 405, { error: `method ${req.method} not allowed on ${path}` });
      return true;
    }
    return false;
  }

  /**
   * Starts the trace of a request from its X-Load-Step header and finishes it when the
   * response is sent (status as sent) or the client goes away first (status 499).
   */
  traceRequest(req: IncomingMessage, res: ServerResponse): RequestTrace {
    if (!this.enabled) return new RequestTrace(NOOP_SINK, 'untagged', undefined, 0);
    const trace = this.recorder.beginRequest(req.headers['x-load-step']);
    const metrics = this.metrics!;
    const finish = (status: number) => {
      if (trace.finished) return;
      trace.finish(status);
      metrics.requestDuration.observe(
        { status: String(status) },
        (this.recorder.now() - trace.arrivedMs) / 1000,
      );
    };
    res.once('finish', () => finish(res.statusCode));
    res.once('close', () => finish(res.writableFinished ? res.statusCode : CLIENT_CLOSED_STATUS));
    return trace;
  }

  /** Runs `fn` so that pool waits and queries it causes are recorded on `trace`. */
  run<T>(trace: RequestTrace, fn: () => T): T {
    return this.enabled ? runWithTrace(trace, fn) : fn();
  }

  /** Records an expiry: the caller's deadline passed, the work is not done (before answering 504). */
  expire(trace: RequestTrace, reason: ExpireReason): void {
    if (!this.enabled) return;
    trace.expire(reason);
    this.metrics!.expired.inc({ reason });
  }

  /** Records a refusal (before answering 503 + Retry-After). */
  shed(trace: RequestTrace, reason: ShedReason): void {
    if (!this.enabled) return;
    if (reason === 'queue') this.#checkSaturation(trace);
    trace.shed(reason);
    this.metrics!.shed.inc({ reason });
  }

  /** Stops the timeline tick, the gate's and the breaker's timers, and detaches from the pool. */
  close(): void {
    this.breaker?.stop();
    this.recorder.stopTicking();
    this.#probe?.detach();
    this.gate?.stop();
    this.#gateSignal?.close();
  }

  /**
   * The database went away or came back: one log line each way (the second with how long
   * it was away and how many requests were refused meanwhile), the metrics, the recorder.
   */
  #databaseTransition(t: DatabaseTransition): void {
    const ts = new Date(t.atMs).toISOString();
    if (t.to === 'down') {
      this.#refusedSinceDown = 0;
      this.#log(
        `ts=${ts} level=error event=database_unreachable error=${JSON.stringify(t.error ?? 'unknown')} probeEveryMs=${this.breaker?.settings.probeIntervalMs}`,
      );
      this.metrics?.outages?.inc();
    } else {
      this.#log(
        `ts=${ts} level=info event=database_reachable downMs=${Math.round(t.downMs ?? 0)} refused=${this.#refusedSinceDown}`,
      );
    }
    if (this.enabled) this.recorder.databaseState(t.to === 'down');
  }

  /** Counts a request that found the pool at its max and its wait queue at its cap. */
  #checkSaturation(trace: RequestTrace | undefined): void {
    const { poolMax, queueMax } = this.recorder.settings;
    if (poolMax === null || queueMax === null) return;
    const pool = this.#pool;
    if (pool.totalCount < poolMax || pool.waitingCount < queueMax) return;
    this.#saturatedTotal++;
    trace?.saturated();
    this.metrics?.saturated.inc();
    const now = this.recorder.now();
    if (now - this.#lastSaturationLogMs < this.#logIntervalMs) return;
    this.#lastSaturationLogMs = now;
    const inUse = this.#probe?.checkedOut ?? pool.totalCount - pool.idleCount;
    this.#log(
      `ts=${new Date(now).toISOString()} level=warn event=pool_saturated total=${this.#saturatedTotal} inUse=${inUse} max=${poolMax} waiting=${pool.waitingCount}`,
    );
  }
}

/** Writes a JSON response with a content length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
