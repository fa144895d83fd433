// A circuit breaker on the database: while it is unreachable, refuse at once and probe it.
import { describeDatabaseError } from './database-errors.ts';

/** The breaker's two states: `up`, requests use the pool; `down`, they are refused at once. */
export type DatabaseState = 'up' | 'down';

/** A change of state, for the log, the metrics and the step recorder. */
export interface DatabaseTransition {
  to: DatabaseState;
  /** When it changed, ms on the breaker's clock. */
  atMs: number;
  /** To `down`: what the probe met (`ECONNREFUSED connect ECONNREFUSED 127.0.0.1:5432`). */
  error?: string;
  /** To `up`: how long the database was unreachable, ms. */
  downMs?: number;
}

/** Settings of {@link DatabaseBreaker}. */
export interface DatabaseBreakerSettings {
  /** While down, how long after one failed probe the next one starts, ms. */
  probeIntervalMs: number;
}

/**
 * One attempt to reach the database on a connection of its own (not the pool's): resolves
 * when the database answered, rejects with what it met otherwise. It must give up on its
 * own within a bounded time (a connect timeout), or the breaker waits for it.
 */
export type DatabaseProbe = () => Promise<void>;

/**
 * The database's state as the service acts on it. A request that meets the database's
 * absence (a refused connection, a session ended by a shutdown: see
 * `isDatabaseUnavailable`) reports it with {@link suspect}; the breaker does not trust one
 * error (a single ended session may be `pg_terminate_backend`) but probes at once on a
 * fresh connection, and only a failed probe turns it `down`. While down:
 *
 * - {@link allow} says no: requests are answered 503 at once instead of each trying a
 *   connection of its own (against a dead host that is a connect timeout per request, and
 *   a pool churning through clients that fail);
 * - one probe runs every `probeIntervalMs` (and never two at once), so serving resumes at
 *   most one interval plus one connection set-up after the database is back; the pool then
 *   opens new connections as requests need them.
 *
 * Requests already past {@link allow} when the database went away fail on their own
 * connection and are answered 503 too.
 */
export class DatabaseBreaker {
  readonly settings: DatabaseBreakerSettings;
  readonly #probe: DatabaseProbe;
  readonly #onTransition: (t: DatabaseTransition) => void;
  readonly #now: () => number;
  #state: DatabaseState = 'up';
  #downSinceMs: number | undefined;
  #probing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(
    settings: DatabaseBreakerSettings,
    probe: DatabaseProbe,
    onTransition: (t: DatabaseTransition) => void = () => {},
    now: () => number = Date.now,
  ) {
    if (!(settings.probeIntervalMs > 0))
      throw new RangeError(`the probe interval must be above 0 ms, not ${settings.probeIntervalMs}`);
    this.settings = settings;
    this.#probe = probe;
    this.#onTransition = onTransition;
    this.#now = now;
  }

  get state(): DatabaseState {
    return this.#state;
  }

  /** When the database was found unreachable (ms on the breaker's clock), while it is. */
  get downSinceMs(): number | undefined {
    return this.#downSinceMs;
  }

  /** Whether a request may use the database now: false while it is down (answer 503 at once). */
  allow(): boolean {
    return this.#state === 'up';
  }

  /**
   * A request or a pool client met an error that means the database may be gone: probes
   * it now unless a probe is running or the breaker is down already (its own probes run).
   */
  suspect(): void {
    if (this.#state === 'up' && !this.#probing && !this.#stopped) void this.check();
  }

  /**
   * Probes the database once (joining a probe already running) and changes state on the
   * answer; while down, schedules the next probe. Resolves when the probe is done.
   */
  check(): Promise<void> {
    this.#probing ??= this.#probe().then(
      () => this.#probed(undefined),
      (error: unknown) => this.#probed(error ?? new Error('the probe failed')),
    );
    return this.#probing;
  }

  /** Stops probing: no timer is left and no further transition is made. Idempotent. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #probed(error: unknown): void {
    this.#probing = undefined;
    if (this.#stopped) return;
    const now = this.#now();
    if (error === undefined && this.#state === 'down') {
      const downMs = now - (this.#downSinceMs ?? now);
      this.#state = 'up';
      this.#downSinceMs = undefined;
      this.#onTransition({ to: 'up', atMs: now, downMs });
    } else if (error !== undefined && this.#state === 'up') {
      this.#state = 'down';
      this.#downSinceMs = now;
      this.#onTransition({ to: 'down', atMs: now, error: describeDatabaseError(error) });
    }
    if (this.#state === 'down') {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        void this.check();
      }, this.settings.probeIntervalMs);
      this.#timer.unref();
    }
  }
}
