// One request's passage through the service, recorded into its step bucket.
import type { ExpireReason, ShedReason, UnavailableReason } from '../../contract/index.ts';

/** What a trace reports to; implemented by the StepRecorder. */
export interface TraceSink {
  recordWait(trace: RequestTrace, durationMs: number): void;
  recordQuery(trace: RequestTrace, durationMs: number): void;
  recordDatabase(trace: RequestTrace, durationMs: number): void;
  recordShed(trace: RequestTrace, reason: ShedReason): void;
  recordUnavailable(trace: RequestTrace, reason: UnavailableReason): void;
  recordExpire(trace: RequestTrace, reason: ExpireReason): void;
  recordSaturated(trace: RequestTrace): void;
  recordFinish(trace: RequestTrace, status: number, handlerMs: number): void;
  now(): number;
}

/**
 * Handle for one in-flight request. Created by `StepRecorder.beginRequest`; the pool
 * instrumentation records waits and queries through the current trace, and the HTTP
 * layer calls `finish` once with the status sent.
 */
export class RequestTrace {
  readonly step: string;
  readonly arrivedMs: number;
  /** Opaque to callers: the recorder's bucket for this step. */
  readonly bucketRef: unknown;
  readonly #sink: TraceSink;
  #finished = false;
  #shedReason: ShedReason | undefined;
  #unavailable: UnavailableReason | undefined;
  #expired = false;

  constructor(sink: TraceSink, step: string, bucketRef: unknown, arrivedMs: number) {
    this.#sink = sink;
    this.step = step;
    this.bucketRef = bucketRef;
    this.arrivedMs = arrivedMs;
  }

  /** Time spent waiting for a pool connection, ms. */
  recordWaitMs(durationMs: number): void {
    if (!this.#finished) this.#sink.recordWait(this, durationMs);
  }

  /**
   * Time one database query took, ms. Recorded even after the response was finished (the
   * client went away, 499): the query still ran, and that work for nobody is what a
   * congestion collapse is made of.
   */
  recordQueryMs(durationMs: number): void {
    this.#sink.recordQuery(this, durationMs);
  }

  /**
   * The database's own time for one query, ms, as the database measured it (for example
   * `clock_timestamp() - statement_timestamp()` returned with the result). Unlike the query
   * time the service sees, it leaves out how long the event loop took to read the result.
   */
  recordDatabaseMs(durationMs: number): void {
    this.#sink.recordDatabase(this, durationMs);
  }

  /** Marks the request as refused; call before answering 503. At most once. */
  shed(reason: ShedReason): void {
    if (this.#finished || this.#shedReason || this.#unavailable) return;
    this.#shedReason = reason;
    this.#sink.recordShed(this, reason);
  }

  /**
   * Marks the request as refused because something it needed was unavailable (the database
   * was unreachable); call before answering 503. At most once, and never after a shed.
   */
  unavailable(reason: UnavailableReason): void {
    if (this.#finished || this.#shedReason || this.#unavailable) return;
    this.#unavailable = reason;
    this.#sink.recordUnavailable(this, reason);
  }

  /** Marks the request as expired (its caller's deadline passed); call before answering 504. At most once. */
  expire(reason: ExpireReason): void {
    if (this.#finished || this.#shedReason || this.#unavailable || this.#expired) return;
    this.#expired = true;
    this.#sink.recordExpire(this, reason);
  }

  /** The request found every limit full (the pool at its max, its queue at its cap). */
  saturated(): void {
    if (!this.#finished) this.#sink.recordSaturated(this);
  }

  get shedReason(): ShedReason | undefined {
    return this.#shedReason;
  }

  /** Why the request was refused for want of something, if it was. */
  get unavailableReason(): UnavailableReason | undefined {
    return this.#unavailable;
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** Records the response status and the handler time; later calls are ignored. */
  finish(status: number): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#sink.recordFinish(this, status, this.#sink.now() - this.arrivedMs);
  }
}
