// Prometheus series for the pool and the HTTP layer (prom-client).
import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { EXPIRE_REASONS, SHED_REASONS, UNAVAILABLE_REASONS } from '../../contract/index.ts';
import type { AdmissionGate } from './admission-gate.ts';
import type { DatabaseBreaker } from './database-breaker.ts';

/** The limits the service was configured with, exported beside the figures they bound. */
export interface MetricLimits {
  poolMax: number | null;
  /** null: the wait queue is unbounded. */
  queueMax: number | null;
  gate?: AdmissionGate | undefined;
  /** The database's circuit breaker, when the service has one. */
  breaker?: DatabaseBreaker | undefined;
}

/** The Prometheus registry and series one instrumented service exposes at `/metrics`. */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly saturated: Counter;
  readonly shed: Counter<'reason'>;
  readonly expired: Counter<'reason'>;
  readonly unavailable: Counter<'reason'>;
  /** With a breaker only: without one nobody watches for outages. */
  readonly outages: Counter | undefined;
  readonly requestDuration: Histogram<'status'>;
  readonly admissionTransitions: Counter<'to'>;

  /** `checkedOut` reads the instrumentation's exact count of connections in use. */
  constructor(pool: pg.Pool, checkedOut: () => number, limits: MetricLimits) {
    const registers = [this.registry];
    // In use vs max and waiting vs cap: the pairs a saturation alert compares.
    if (limits.poolMax !== null) {
      const poolMax = limits.poolMax;
      new Gauge({
        name: 'db_pool_connections_max',
        help: 'Connections the pool may hold (its configured max).',
        registers,
        collect() {
          this.set(poolMax);
        },
      });
    }
    if (limits.queueMax !== null) {
      const queueMax = limits.queueMax;
      new Gauge({
        name: 'db_pool_waiting_max',
        help: 'Requests allowed to wait for a connection before new ones are refused (the queue cap).',
        registers,
        collect() {
          this.set(queueMax);
        },
      });
    }
    const gate = limits.gate;
    this.admissionTransitions = new Counter({
      name: 'admission_transitions_total',
      help: 'Admission gate state changes, by the state entered (busy: refusing new requests; normal: admitting).',
      labelNames: ['to'],
      registers,
    });
    if (gate) {
      for (const to of ['busy', 'normal']) this.admissionTransitions.inc({ to }, 0);
      new Gauge({
        name: 'admission_busy',
        help: 'Whether the admission gate is refusing new requests (1) or admitting them (0).',
        registers,
        collect() {
          this.set(gate.state === 'busy' ? 1 : 0);
        },
      });
      new Gauge({
        name: 'admission_signal',
        help: 'What the admission gate last read: event-loop delay in ms, or utilisation in % (its watermarks: admission_high, admission_low).',
        registers,
        collect() {
          this.set(gate.lastSignal);
        },
      });
      for (const [name, value] of [
        ['admission_high', gate.settings.high],
        ['admission_low', gate.settings.low],
      ] as const) {
        new Gauge({
          name,
          help: `The admission gate's ${name === 'admission_high' ? 'high (enter busy)' : 'low (back to normal)'} watermark, in its signal's unit.`,
          registers,
          collect() {
            this.set(value);
          },
        });
      }
    }
    const breaker = limits.breaker;
    if (breaker) {
      new Gauge({
        name: 'db_unreachable',
        help: 'Whether the service finds its database unreachable now (1: requests are answered 503 reason database; 0: reachable).',
        registers,
        collect() {
          this.set(breaker.state === 'down' ? 1 : 0);
        },
      });
    }
    this.unavailable = new Counter({
      name: 'http_requests_unavailable_total',
      help: 'Requests answered 503 + Retry-After because something they needed was unavailable, by reason (database: unreachable). Not overload: see http_requests_shed_total.',
      labelNames: ['reason'],
      registers,
    });
    if (breaker) for (const reason of UNAVAILABLE_REASONS) this.unavailable.inc({ reason }, 0);
    this.outages = breaker
      ? new Counter({
          name: 'db_outages_total',
          help: 'Times the database was found unreachable (each outage counts once, however long).',
          registers,
        })
      : undefined;
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
      help: 'Requests refused with 503 + Retry-After, by reason (queue full, acquire timeout, admission gate busy).',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of SHED_REASONS) this.shed.inc({ reason }, 0);
    this.expired = new Counter({
      name: 'http_requests_expired_total',
      help: "Requests answered 504 because their caller's deadline had passed, by reason (wait: while waiting for a connection; budget: too little of it left for the query).",
      labelNames: ['reason'],
      registers,
    });
    for (const reason of EXPIRE_REASONS) this.expired.inc({ reason }, 0);
    this.requestDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from request arrival to the last byte of the response.',
      labelNames: ['status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
  }
}
