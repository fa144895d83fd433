// Prometheus series for the pool and the HTTP layer (prom-client).
import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ExpireReason, ShedReason } from '../../contract/index.ts';

/** The Prometheus registry and series one instrumented service exposes at `/metrics`. */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly saturated: Counter;
  readonly shed: Counter<'reason'>;
  readonly expired: Counter<'reason'>;
  readonly requestDuration: Histogram<'status'>;

  /** `checkedOut` reads the instrumentation's exact count of connections in use. */
  constructor(pool: pg.Pool, checkedOut: () => number) {
    const registers = [this.registry];
    new Gauge({
      name: 'db_pool_connections_total',
      help: 'Connections the pool holds (idle and in use).',
      registers,
      collect() {
        this.set(pool.totalCount);
      },
    });
    new Gauge({
      name: 'db_pool_connections_idle',
      help: 'Connections open and idle in the pool.',
      registers,
      collect() {
        this.set(pool.idleCount);
      },
    });
    new Gauge({
      name: 'db_pool_connections_in_use',
      help: 'Connections checked out of the pool.',
      registers,
      collect() {
        this.set(checkedOut());
      },
    });
    new Gauge({
      name: 'db_pool_waiting_requests',
      help: 'Requests waiting for a pool connection.',
      registers,
      collect() {
        this.set(pool.waitingCount);
      },
    });
    this.saturated = new Counter({
      name: 'db_pool_saturated_total',
      help: 'Requests that found the pool at max and its wait queue full.',
      registers,
    });
    this.shed = new Counter({
      name: 'http_requests_shed_total',
      help: 'Requests refused with 503 + Retry-After, by reason (queue full, acquire timeout).',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ['queue', 'timeout'] satisfies ShedReason[]) this.shed.inc({ reason }, 0);
    this.expired = new Counter({
      name: 'http_requests_expired_total',
      help: "Requests answered 504 because their caller's deadline had passed, by reason (wait: while waiting for a connection).",
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ['wait'] satisfies ExpireReason[]) this.expired.inc({ reason }, 0);
    this.requestDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from request arrival to the last byte of the response.',
      labelNames: ['status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
  }
}
