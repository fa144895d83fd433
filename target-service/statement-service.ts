// The reference statement API: a bounded pg pool, load shedding, per-step instrumentation.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { DEADLINE_HEADER } from '../contract/index.ts';
import type { ServiceConfig } from './config.ts';
import { StepInstrumentation, sendJson } from './instrumentation/index.ts';
import type { RequestTrace } from './instrumentation/request-trace.ts';
import { ACCOUNT_LIMIT, parseAccount, renderStatementGzip } from './statement.ts';

/** The service's name in `/steps` and in capacity records. */
export const SERVICE_NAME = 'statement-api';

/** Seconds a refused client is told to wait before retrying. */
const RETRY_AFTER_SECONDS = '1';

/**
 * The stand-in query: it sleeps QUERY_MS in the database and returns how long the
 * statement ran by the database's own clock (the subquery runs first, so clock_timestamp()
 * is read after the sleep). That figure stays flat when the service's event loop is slow
 * to read results, which the query time measured in the service does not.
 */
const STAND_IN_QUERY =
  'SELECT (extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)::float8 AS database_ms FROM (SELECT pg_sleep($1)) AS sleep';

/** How long a graceful stop waits for in-flight requests before closing sockets. */
const DRAIN_TIMEOUT_MS = 30_000;

/**
 * How long one probe of an unreachable database may take (connect, authenticate,
 * `SELECT 1`), ms. Requests never wait for a probe, so it can be generous: a busy machine's
 * SCRAM handshake must not read as an absent database.
 */
const PROBE_TIMEOUT_MS = 1000;

/**
 * How long the work after the query (CPU_MS, render, gzip) takes, ms: an exponentially
 * weighted mean (α = 0.1) of what it took, so the deadline check counts it too.
 */
class RenderEstimate {
  ms = 0;
  observe(ms: number): void {
    this.ms = this.ms === 0 ? ms : this.ms + 0.1 * (ms - this.ms);
  }
}

/** A running statement service. */
export interface StatementService {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  config: ServiceConfig;
  pool: pg.Pool;
  instrumentation: StepInstrumentation;
  server: Server;
  /**
   * Graceful stop: refuse new connections, let in-flight requests finish (up to 30 s),
   * then close the pool. Safe to call twice.
   */
  close(): Promise<void>;
}

/** Options besides the service settings. */
export interface StartOptions {
  /** Structured log lines (saturation events, pool errors); default stderr. */
  log?: (line: string) => void;
}

/**
 * Starts the statement API on `config.host:config.port` against `databaseUrl`. The pool is
 * warmed to `poolMax` connections first, so the first step does not pay for connecting.
 */
export async function startStatementService(
  config: ServiceConfig,
  databaseUrl: string,
  options: StartOptions = {},
): Promise<StatementService> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: config.poolMax,
    // node-postgres's acquire timeout; 0 waits forever, which is what SHED=off means.
    connectionTimeoutMillis: config.shed ? config.acquireTimeoutMs : 0,
    // Keep connections open between steps: reconnecting would be measured as load.
    idleTimeoutMillis: 0,
  });
  // Errors of connections nobody is using: pg-pool has removed the client already. Unhandled,
  // an 'error' event would end the process; here it is logged and may mean the database left.
  let onDatabaseError: (error: Error) => void = () => undefined;
  pool.on('error', (error) => {
    log(`level=error event=pool_client_error message=${JSON.stringify(error.message)}`);
    onDatabaseError(error);
  });
  // A checked-out client has no listener of pg-pool's: when the database goes away under a
  // running query, the client emits 'error' (after failing the query) and, unheard, that
  // would crash the process. The query's own rejection answers the request; this only tells
  // the breaker.
  pool.on('connect', (client) => client.on('error', (error) => onDatabaseError(error)));
  await warm(pool, config.poolMax);

  const instrumentation = new StepInstrumentation({
    service: SERVICE_NAME,
    pool,
    enabled: config.instrument,
    log,
    settings: {
      poolMax: config.poolMax,
      queueMax: config.shed ? config.queueMax : null,
      acquireTimeoutMs: config.shed ? config.acquireTimeoutMs : null,
      shed: config.shed,
      extra: {
        queryMs: config.queryMs,
        payloadKb: config.payloadKb,
        renderFirst: config.renderFirst,
        deadlines: config.deadlines,
        cpuMs: config.cpuMs,
        admission: config.admission,
        ...(config.admission
          ? config.admissionSignal === 'delay'
            ? {
                admissionSignal: 'delay',
                admissionHighMs: config.admissionHighMs,
                admissionLowMs: config.admissionLowMs,
              }
            : {
                admissionSignal: 'utilization',
                admissionHighPct: config.admissionHighPct,
                admissionLowPct: config.admissionLowPct,
              }
          : {}),
      },
    },
    ...(config.admission
      ? {
          admission:
            config.admissionSignal === 'delay'
              ? {
                  signal: 'delay' as const,
                  high: config.admissionHighMs,
                  low: config.admissionLowMs,
                  sampleMs: config.admissionSampleMs,
                  overdueMs: config.admissionHighMs,
                }
              : {
                  signal: 'utilization' as const,
                  high: config.admissionHighPct,
                  low: config.admissionLowPct,
                  sampleMs: config.admissionSampleMs,
                },
        }
      : {}),
    database: { probeIntervalMs: config.databaseProbeMs, probe: () => probeDatabase(databaseUrl) },
  });
  onDatabaseError = (error) => instrumentation.databaseFailed(error);

  const renderEstimate = new RenderEstimate();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (instrumentation.handleAdminRoute(req, res)) return;
    const url = new URL(req.url ?? '/', 'http://service.invalid');
    if (url.pathname === '/healthz') {
      sendJson(res, 200, { status: 'ok' });
      return;
    }
    if (url.pathname !== '/statement') {
      sendJson(res, 404, {
        error: 'not_found',
        message: `no route ${url.pathname}; try GET /statement?account=1`,
      });
      return;
    }
    if (req.method !== 'GET') {
      sendJson(res, 405, { error: 'method_not_allowed', message: 'use GET' }, { allow: 'GET' });
      return;
    }
    const trace = instrumentation.traceRequest(req, res);
    // At the door, before any work: a busy gate refuses (the event loop is late already).
    if (!instrumentation.admit(trace)) {
      sendJson(
        res,
        503,
        { error: 'overloaded', reason: 'admission' },
        { 'retry-after': RETRY_AFTER_SECONDS },
      );
      return;
    }
    // The client's deadline, on this process's monotonic clock (no clock sync needed).
    const budgetMs = config.deadlines ? deadlineBudgetMs(req.headers[DEADLINE_HEADER]) : undefined;
    const deadline = budgetMs === undefined ? undefined : performance.now() + budgetMs;
    instrumentation
      .run(trace, () =>
        serveStatement(url, res, trace, pool, config, instrumentation, deadline, renderEstimate),
      )
      .catch((error: unknown) => {
        log(`level=error event=handler_error message=${JSON.stringify(String(error))}`);
        if (!res.headersSent)
          sendJson(res, 500, { error: 'internal', message: 'unexpected error; see the service log' });
        else res.destroy();
      });
  };

  const server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive sockets would hold close() open; in-flight ones finish first.
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      const deadline = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS);
      server.closeIdleConnections();
      await closed;
      clearInterval(sweep);
      clearTimeout(deadline);
      instrumentation.close();
      await pool.end();
    })();
    return closing;
  };

  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return { url: `http://${host}:${port}`, port, config, pool, instrumentation, server, close };
}

async function serveStatement(
  url: URL,
  res: ServerResponse,
  trace: RequestTrace,
  pool: pg.Pool,
  config: ServiceConfig,
  instrumentation: StepInstrumentation,
  /** When the caller gives up (performance.now() ms), if it said. */
  deadline: number | undefined,
  renderEstimate: RenderEstimate,
): Promise<void> {
  const account = parseAccount(url.searchParams.get('account'));
  if (account === undefined) {
    sendJson(res, 400, {
      error: 'bad_request',
      message: `account must be an integer 0 <= id < ${ACCOUNT_LIMIT}, e.g. /statement?account=42`,
    });
    return;
  }
  // The work besides the query (CPU_MS, render, gzip) runs before the borrow with
  // RENDER_FIRST=on, so that it never holds a connection; after the release otherwise.
  const render = () => {
    const start = performance.now();
    if (config.cpuMs > 0) spendCpu(config.cpuMs);
    const gzipped = renderStatementGzip(account, config.payloadKb);
    renderEstimate.observe(performance.now() - start);
    return gzipped;
  };
  // The database is known to be unreachable: answer at once, before any work (the breaker
  // probes it and lets requests through again once it answers).
  if (!instrumentation.databaseAvailable(trace)) {
    unavailable(res);
    return;
  }
  let body = config.renderFirst ? render() : undefined;

  if (config.shed && pool.waitingCount >= config.queueMax) {
    refuse(res, trace, instrumentation, 'queue');
    return;
  }
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    if (config.shed && isAcquireTimeout(error)) {
      refuse(res, trace, instrumentation, 'timeout');
      return;
    }
    // A new connection refused or cut: the database is away, which is not this request's fault.
    if (instrumentation.databaseFailed(error, trace)) {
      unavailable(res);
      return;
    }
    throw error;
  }
  // The caller gave up while this request waited, or will before the work still to do is
  // done: its answer would be read by nobody, so the query is not run (504: indeterminate,
  // the caller may have retried; 503 is a refusal).
  const expiry = deadline === undefined ? undefined : expiryReason(deadline, config, renderEstimate.ms);
  if (expiry) {
    client.release();
    instrumentation.expire(trace, expiry);
    sendJson(res, 504, {
      error: 'deadline_exceeded',
      reason: expiry,
      message:
        expiry === 'wait'
          ? 'the request waited past its X-Request-Timeout-Ms'
          : 'what was left of its X-Request-Timeout-Ms was shorter than the query takes',
    });
    return;
  }
  try {
    const result = await client.query<{ database_ms: number }>(STAND_IN_QUERY, [config.queryMs / 1000]);
    client.release();
    const databaseMs = Number(result.rows[0]?.database_ms);
    if (Number.isFinite(databaseMs)) trace.recordDatabaseMs(databaseMs);
  } catch (error) {
    // A failed connection must not go back to the pool.
    client.release(error instanceof Error ? error : new Error(String(error)));
    // The session ended under the query (a shutdown's 57P01, a dropped socket).
    if (instrumentation.databaseFailed(error, trace)) {
      unavailable(res);
      return;
    }
    throw error;
  }
  body ??= render();
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-encoding': 'gzip',
    'content-length': body.length,
    'cache-control': 'no-store',
  });
  res.end(body);
}

function refuse(
  res: ServerResponse,
  trace: RequestTrace,
  instrumentation: StepInstrumentation,
  reason: 'queue' | 'timeout',
) {
  instrumentation.shed(trace, reason);
  sendJson(res, 503, { error: 'overloaded', reason }, { 'retry-after': RETRY_AFTER_SECONDS });
}

/** Answers 503 for want of the database; the refusal is recorded by the caller. */
function unavailable(res: ServerResponse): void {
  if (res.headersSent || res.destroyed) return;
  sendJson(res, 503, { error: 'unavailable', reason: 'database' }, { 'retry-after': RETRY_AFTER_SECONDS });
}

/**
 * One probe of the database on a connection of its own, outside the pool (so the pool's
 * figures and wait queue do not see it): connect, `SELECT 1`, close, within
 * PROBE_TIMEOUT_MS. Rejects with what it met.
 */
async function probeDatabase(databaseUrl: string): Promise<void> {
  const client = new pg.Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    query_timeout: PROBE_TIMEOUT_MS,
  });
  // Its failure is the probe's answer, given by connect() or query(); the event must not crash.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Why a request that got its connection at this moment is not worth serving, if it is
 * not: its deadline passed (`wait`), or less of it is left than the query and the CPU
 * after it take (`budget`).
 */
function expiryReason(
  deadline: number,
  config: ServiceConfig,
  renderMs: number,
): 'wait' | 'budget' | undefined {
  const now = performance.now();
  if (now >= deadline) return 'wait';
  // With RENDER_FIRST=on the render is already done: only the query is left.
  const after = config.renderFirst ? 0 : Math.max(config.cpuMs, renderMs);
  if (now + config.queryMs + after > deadline) return 'budget';
  return undefined;
}

/**
 * Keeps the event loop busy for `ms` of wall time: a stand-in for per-request CPU work
 * (templating, serialisation), so that the process's one core becomes a limit of its own.
 */
function spendCpu(ms: number): void {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x = (x * 31 + 7) % 1_000_003;
  if (x < 0) throw new Error('unreachable');
}

/** The client's deadline budget from the X-Request-Timeout-Ms header, ms; undefined without one. */
export function deadlineBudgetMs(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^\d{1,9}$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

function isAcquireTimeout(error: unknown): boolean {
  return error instanceof Error && error.message.includes('timeout exceeded when trying to connect');
}

/** How long each of the first connections may take to open, ms. */
const WARM_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Opens `size` connections up front (and checks the database answers). pg-pool's
 * connectionTimeoutMillis bounds a new connection's opening as well as a wait for a free one:
 * the acquire timeout a request gets (200 ms by default) is no deadline for opening the pool
 * at start, which on a busy machine (a fork and a SCRAM exchange per connection) can take
 * longer, and failed the service's start. The warm-up has its own.
 */
async function warm(pool: pg.Pool, size: number): Promise<void> {
  const { options } = pool;
  const acquire = options.connectionTimeoutMillis;
  options.connectionTimeoutMillis = WARM_CONNECT_TIMEOUT_MS;
  try {
    const clients = await Promise.all(Array.from({ length: size }, () => pool.connect()));
    await clients[0]?.query('SELECT 1');
    for (const client of clients) client.release();
  } finally {
    options.connectionTimeoutMillis = acquire;
  }
}
