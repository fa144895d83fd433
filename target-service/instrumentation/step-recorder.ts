// Per-step buckets of everything the service saw, keyed by the X-Load-Step header.
import type {
  ExpireReason,
  ServerLiveReport,
  ServerStepReport,
  ServiceSettings,
  ShedReason,
  StepBucket,
  UnavailableReason,
} from '../../contract/index.ts';
import { LatencyHistogram } from '../../lib/latency-histogram.ts';
import { PoolWindow } from './pool-window.ts';
import {
  type Clock,
  type LoopDelayMonitor,
  type LoopDelaySummary,
  type ProcessMark,
  type ProcessProbe,
  ProcessWindow,
  systemClock,
  systemProbe,
  takeMark,
} from './process-probe.ts';
import { RequestTrace, type TraceSink } from './request-trace.ts';
import { isSpecialStep, MAX_STEP_BUCKETS, SPECIAL_STEPS, stepKeyFromHeader } from './step-key.ts';
import { Timeline } from './timeline.ts';

/** Options for {@link StepRecorder}. */
export interface StepRecorderOptions {
  /** The service's name in reports, e.g. `statement-api`. */
  service: string;
  settings: ServiceSettings;
  clock?: Clock;
  probe?: ProcessProbe;
  /** Seconds of per-second timeline kept; default 3600. */
  timelineSeconds?: number;
  /** Distinct step buckets before `overflow`; default 256. */
  maxBuckets?: number;
  /** Event-loop delay per step; none by default (StepInstrumentation passes Node's). */
  loopDelay?: LoopDelayMonitor;
  /** The admission gate's state, when the service has one (for the timeline and `/steps/live`). */
  admission?: () => 'normal' | 'busy';
  /**
   * The service tells the recorder when its database is unreachable ({@link
   * StepRecorder.databaseState}): the report then carries `databaseDownMs` and
   * `unavailable` per step and per second, and `/steps/live` the state. Off by default: a
   * service that does not watch its database must not report it as always reachable.
   */
  watchesDatabase?: boolean;
}

class Bucket {
  readonly requestsByStatus = new Map<number, number>();
  readonly sheds: Record<ShedReason, number> = { queue: 0, timeout: 0, admission: 0 };
  readonly expired: Record<ExpireReason, number> = { wait: 0, budget: 0 };
  readonly unavailable: Record<UnavailableReason, number> = { database: 0 };
  /** Time the database was unreachable while this step was current, ms. */
  databaseDownMs = 0;
  saturated = 0;
  readonly wait = new LatencyHistogram();
  readonly query = new LatencyHistogram();
  readonly handler = new LatencyHistogram();
  readonly database = new LatencyHistogram();
  readonly pool = new PoolWindow();
  readonly process = new ProcessWindow();
  requests = 0;
  served = 0;
  /** What completed while this step was current (see StepWindow). */
  windowServed = 0;
  windowShed = 0;
  windowAnswered = 0;
  windowQueries = 0;
  /** Event-loop delay over the time this step was current, once it is no longer current. */
  loopDelay: LoopDelaySummary | null = null;
  lastMs: number;

  constructor(
    readonly key: string,
    readonly firstMs: number,
  ) {
    this.lastMs = firstMs;
  }
}

/**
 * The service side of a capacity study. Every request is counted in the bucket of its
 * step tag; pool state changes (fed by the pool instrumentation on every acquire,
 * release and queue change) are integrated exactly over the time each step was current.
 *
 * The *current* step is the newest step tag seen: a tag becomes current the first time
 * it arrives, and late requests of an earlier step (arrivals jittered across a step
 * boundary) count in their own bucket without taking the pool figures back. The special
 * buckets (`untagged`, `invalid`, `overflow`) become current only while no real step
 * has been seen, so a stray probe request does not steal a step's utilisation.
 */
export class StepRecorder implements TraceSink {
  readonly service: string;
  readonly settings: ServiceSettings;
  readonly #clock: Clock;
  readonly #probe: ProcessProbe;
  readonly #maxBuckets: number;
  readonly #timelineSeconds: number;
  readonly #loopDelay: LoopDelayMonitor | undefined;
  readonly #admission: (() => 'normal' | 'busy') | undefined;
  readonly #watchesDatabase: boolean;
  #saturatedTotal = 0;
  #buckets = new Map<string, Bucket>();
  #current: Bucket | undefined;
  #currentMark: ProcessMark;
  #timeline: Timeline;
  #startedMs: number;
  // The pool's state and when it last changed: it is a real fact, so reset() keeps it.
  #checkedOut = 0;
  #waiting = 0;
  /** Whether the database is unreachable now: a real fact as well, kept by reset(). */
  #databaseDown = false;
  #sinceMs: number;
  #tick: NodeJS.Timeout | undefined;

  constructor(options: StepRecorderOptions) {
    this.service = options.service;
    this.settings = options.settings;
    this.#clock = options.clock ?? systemClock;
    this.#probe = options.probe ?? systemProbe;
    this.#maxBuckets = options.maxBuckets ?? MAX_STEP_BUCKETS;
    this.#timelineSeconds = options.timelineSeconds ?? 3600;
    this.#loopDelay = options.loopDelay;
    this.#admission = options.admission;
    this.#watchesDatabase = options.watchesDatabase ?? false;
    this.#startedMs = this.#clock.now();
    this.#sinceMs = this.#startedMs;
    this.#currentMark = takeMark(this.#clock, this.#probe);
    this.#timeline = this.#newTimeline();
  }

  #newTimeline(): Timeline {
    const admission = this.#admission;
    return new Timeline(
      this.#timelineSeconds,
      this.#clock,
      this.#probe,
      admission ? () => admission() === 'busy' : undefined,
      this.#watchesDatabase,
    );
  }

  /** Closes timeline seconds once a second even when no request arrives. Idempotent. */
  startTicking(): void {
    this.#tick ??= setInterval(() => this.#advance(this.#clock.now()), 1000);
    this.#tick.unref();
  }

  stopTicking(): void {
    if (this.#tick) clearInterval(this.#tick);
    this.#tick = undefined;
    this.#loopDelay?.close();
  }

  now(): number {
    return this.#clock.now();
  }

  /** Starts a trace for a request that arrived now with this X-Load-Step header value. */
  beginRequest(stepHeader: string | string[] | undefined): RequestTrace {
    const now = this.#clock.now();
    this.#advance(now);
    const bucket = this.#bucketFor(stepKeyFromHeader(stepHeader), now);
    bucket.requests++;
    bucket.lastMs = now;
    return new RequestTrace(this, bucket.key, bucket, now);
  }

  /**
   * The pool's state changed (or was re-read): `checkedOut` connections are in use and
   * `waiting` requests wait for one. Call on every acquire, release and queue change.
   */
  poolState(checkedOut: number, waiting: number): void {
    const now = this.#clock.now();
    this.#advance(now);
    this.#checkedOut = checkedOut;
    this.#waiting = waiting;
    this.#current?.pool.observe(checkedOut, waiting);
    this.#timeline.observe(checkedOut, waiting);
  }

  /**
   * The database became unreachable (`down` true) or reachable again. Its time unreachable
   * is integrated exactly, like the pool's state, over the time each step was current and
   * over each second of the timeline.
   */
  databaseState(down: boolean): void {
    const now = this.#clock.now();
    this.#advance(now);
    this.#databaseDown = down;
  }

  recordWait(trace: RequestTrace, durationMs: number): void {
    (trace.bucketRef as Bucket).wait.record(durationMs);
  }

  recordQuery(trace: RequestTrace, durationMs: number): void {
    (trace.bucketRef as Bucket).query.record(durationMs);
    if (this.#current) this.#current.windowQueries++;
  }

  recordDatabase(trace: RequestTrace, durationMs: number): void {
    (trace.bucketRef as Bucket).database.record(durationMs);
  }

  recordExpire(trace: RequestTrace, reason: ExpireReason): void {
    (trace.bucketRef as Bucket).expired[reason]++;
    const now = this.#clock.now();
    this.#advance(now);
    this.#timeline.countExpired(now);
  }

  recordSaturated(trace: RequestTrace): void {
    (trace.bucketRef as Bucket).saturated++;
    this.#saturatedTotal++;
  }

  recordShed(trace: RequestTrace, reason: ShedReason): void {
    (trace.bucketRef as Bucket).sheds[reason]++;
    const now = this.#clock.now();
    this.#advance(now);
    this.#timeline.countShed(now);
    if (this.#current) this.#current.windowShed++;
  }

  /** A 503 for want of the database: counted apart from sheds, which are refusals for overload. */
  recordUnavailable(trace: RequestTrace, reason: UnavailableReason): void {
    (trace.bucketRef as Bucket).unavailable[reason]++;
    const now = this.#clock.now();
    this.#advance(now);
    this.#timeline.countUnavailable(now);
  }

  recordFinish(trace: RequestTrace, status: number, handlerMs: number): void {
    const bucket = trace.bucketRef as Bucket;
    bucket.handler.record(handlerMs);
    bucket.requestsByStatus.set(status, (bucket.requestsByStatus.get(status) ?? 0) + 1);
    const now = this.#clock.now();
    this.#advance(now);
    // Served means a success, any 2xx: 200 from the reference service, 201 or 204 elsewhere.
    const served = status >= 200 && status < 300;
    this.#timeline.countAnswered(now, served, handlerMs);
    // The window counts go to the step current now, not to the step the request was sent in.
    const current = this.#current;
    if (current) {
      current.windowAnswered++;
      if (served) current.windowServed++;
    }
    if (served) bucket.served++;
  }

  /** The `GET /steps` body: every bucket in first-seen order and the closed seconds. */
  report(): ServerStepReport {
    const now = this.#clock.now();
    this.#advance(now);
    const mark = takeMark(this.#clock, this.#probe);
    const poolMax = this.settings.poolMax;
    const steps: StepBucket[] = [...this.#buckets.values()].map((b) => {
      const process = b === this.#current ? b.process.plus(this.#currentMark, mark) : b.process;
      const windowMs = b.lastMs - b.firstMs;
      const pool = b.pool.utilisation(poolMax);
      const statuses: Record<string, number> = {};
      for (const [status, count] of [...b.requestsByStatus].sort((x, y) => x[0] - y[0])) {
        statuses[String(status)] = count;
      }
      return {
        step: b.key,
        firstRequestMs: Math.round(b.firstMs),
        lastRequestMs: Math.round(b.lastMs),
        requests: b.requests,
        served: b.served,
        servedPerSec: windowMs >= 1000 ? Math.round((b.served / (windowMs / 1000)) * 100) / 100 : null,
        statuses,
        sheds: { ...b.sheds },
        expired: { ...b.expired },
        saturated: b.saturated,
        ...(this.#watchesDatabase
          ? { unavailable: { ...b.unavailable }, databaseDownMs: Math.round(b.databaseDownMs) }
          : {}),
        waitMs: b.wait.summary(),
        queryMs: b.query.summary(),
        databaseMs: b.database.count > 0 ? b.database.summary() : null,
        handlerMs: b.handler.summary(),
        pool,
        process: {
          userMs: Math.round(process.userUs / 100) / 10,
          systemMs: Math.round(process.systemUs / 100) / 10,
          cpuPct: Math.round(process.cpuPct * 10) / 10,
          eventLoopUtilization: Math.round(process.eventLoopUtilization * 1000) / 1000,
          loopDelayMs: b === this.#current ? (this.#loopDelay?.peek() ?? null) : b.loopDelay,
        },
        window: {
          ms: pool.currentMs,
          served: b.windowServed,
          shed: b.windowShed,
          answered: b.windowAnswered,
          queries: b.windowQueries,
          servedPerSec:
            pool.currentMs >= 1000
              ? Math.round((b.windowServed / (pool.currentMs / 1000)) * 100) / 100
              : null,
        },
      };
    });
    return {
      kind: 'plateau.server-steps',
      schemaVersion: 2,
      service: this.service,
      settings: this.settings,
      startedMs: Math.round(this.#startedMs),
      generatedMs: Math.round(now),
      steps,
      timeline: this.#timeline.points(),
    };
  }

  /** The `GET /steps/live` body: constant time, whatever the run's length or latencies. */
  live(): ServerLiveReport {
    const now = this.#clock.now();
    this.#advance(now);
    return {
      kind: 'plateau.server-live',
      schemaVersion: 1,
      generatedMs: Math.round(now),
      step: this.#current?.key ?? null,
      checkedOut: this.#checkedOut,
      waiting: this.#waiting,
      last: this.#timeline.last(),
      saturated: this.#saturatedTotal,
      ...(this.#admission ? { admission: this.#admission() } : {}),
      ...(this.#watchesDatabase
        ? { database: this.#databaseDown ? ('down' as const) : ('up' as const) }
        : {}),
    };
  }

  /** Forgets every bucket and the timeline (the pool's live state is kept). */
  reset(): void {
    const now = this.#clock.now();
    this.#advance(now);
    this.#buckets = new Map();
    this.#current = undefined;
    this.#startedMs = now;
    this.#currentMark = takeMark(this.#clock, this.#probe);
    this.#timeline = this.#newTimeline();
    this.#saturatedTotal = 0;
    this.#loopDelay?.take();
  }

  #bucketFor(key: string, now: number): Bucket {
    let bucket = this.#buckets.get(key);
    if (bucket) return bucket;
    if (this.#buckets.size >= this.#maxBuckets && !isSpecialStep(key)) {
      return this.#bucketFor(SPECIAL_STEPS.overflow, now);
    }
    bucket = new Bucket(key, now);
    this.#buckets.set(key, bucket);
    const current = this.#current;
    if (!current || !isSpecialStep(key) || isSpecialStep(current.key)) this.#makeCurrent(bucket);
    return bucket;
  }

  #makeCurrent(bucket: Bucket): void {
    const mark = takeMark(this.#clock, this.#probe);
    this.#current?.process.addBetween(this.#currentMark, mark);
    const delay = this.#loopDelay?.take() ?? null;
    if (this.#current) this.#current.loopDelay = delay;
    this.#currentMark = mark;
    this.#current = bucket;
    bucket.pool.observe(this.#checkedOut, this.#waiting);
  }

  /** Integrates the pool state held since the last change up to `now`. */
  #advance(now: number): void {
    if (now <= this.#sinceMs) return;
    this.#current?.pool.add(now - this.#sinceMs, this.#checkedOut, this.#waiting);
    if (this.#databaseDown && this.#current) this.#current.databaseDownMs += now - this.#sinceMs;
    this.#timeline.advance(
      this.#sinceMs,
      now,
      this.#checkedOut,
      this.#waiting,
      this.#current?.key ?? null,
      this.#databaseDown,
    );
    this.#sinceMs = now;
  }
}
