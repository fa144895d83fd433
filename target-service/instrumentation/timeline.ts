// A per-second record of the service, in a bounded ring buffer.
import type { TimelinePoint } from '../../contract/index.ts';
import { CoarseHistogram } from '../../lib/coarse-histogram.ts';
import { PoolWindow } from './pool-window.ts';
import { type Clock, type ProcessMark, type ProcessProbe, takeMark } from './process-probe.ts';

interface OpenSecond {
  /** Epoch second this slot covers. */
  t: number;
  pool: PoolWindow;
  served: number;
  shed: number;
  answered: number;
  expired: number;
  /** Refusals for want of the database. */
  unavailable: number;
  /** Time the database was unreachable within this second, ms. */
  databaseDownMs: number;
  /** p95 of the handler times of the responses it counted, set as it closes. */
  handlerP95Ms: number | null;
}

/**
 * Per-second served/shed counts, exact time-weighted pool figures and the p95 handler
 * time. Seconds close when time is advanced past their end (by any event, or the
 * recorder's 1 s tick). CPU % is measured between closings: seconds closed together share
 * the CPU used over their span. The p95 comes from one CoarseHistogram that the open
 * second fills and its closing reads and empties: a fixed cost per response and per second,
 * so `GET /steps/live`, which returns the newest closed second, stays constant time.
 */
export class Timeline {
  readonly #capacity: number;
  readonly #clock: Clock;
  readonly #probe: ProcessProbe;
  #points: TimelinePoint[] = [];
  #open: OpenSecond | undefined;
  #cpuMark: ProcessMark;
  readonly #admissionBusy: (() => boolean) | undefined;
  readonly #watchesDatabase: boolean;
  /** The open second's handler times. */
  readonly #handler = new CoarseHistogram();

  /**
   * `capacity` is the number of seconds kept (oldest dropped first); `admissionBusy`, when
   * the service has an admission gate, tells each closing second whether it is busy;
   * `watchesDatabase` adds each second's `databaseDownMs` and `unavailable`.
   */
  constructor(
    capacity: number,
    clock: Clock,
    probe: ProcessProbe,
    admissionBusy?: () => boolean,
    watchesDatabase = false,
  ) {
    this.#capacity = capacity;
    this.#clock = clock;
    this.#probe = probe;
    this.#cpuMark = takeMark(clock, probe);
    this.#admissionBusy = admissionBusy;
    this.#watchesDatabase = watchesDatabase;
  }

  /**
   * Accounts for [fromMs, toMs) during which the pool held `checkedOut` and `waiting` and
   * the database was unreachable or not (`databaseDown`), closing every second that ends
   * inside the interval. `step` labels closed seconds.
   */
  advance(
    fromMs: number,
    toMs: number,
    checkedOut: number,
    waiting: number,
    step: string | null,
    databaseDown = false,
  ): void {
    const open = this.#openAt(fromMs);
    let from = fromMs;
    let slot = open;
    const closed: OpenSecond[] = [];
    while (toMs >= (slot.t + 1) * 1000) {
      const boundary = (slot.t + 1) * 1000;
      slot.pool.add(boundary - from, checkedOut, waiting);
      if (databaseDown) slot.databaseDownMs += Math.max(0, boundary - from);
      slot.handlerP95Ms = this.#takeHandlerP95();
      closed.push(slot);
      from = boundary;
      // After a long idle gap only the last `capacity` seconds can be kept anyway.
      const nextT = Math.max(slot.t + 1, Math.floor(toMs / 1000) - this.#capacity);
      if (nextT > slot.t + 1) from = nextT * 1000;
      slot = this.#newSecond(nextT, checkedOut, waiting);
    }
    slot.pool.add(toMs - from, checkedOut, waiting);
    if (databaseDown) slot.databaseDownMs += Math.max(0, toMs - from);
    this.#open = slot;
    if (closed.length > 0) this.#close(closed, step);
  }

  /** Notes a pool state reached now, for the open second's maxima. */
  observe(checkedOut: number, waiting: number): void {
    this.#open?.pool.observe(checkedOut, waiting);
  }

  /**
   * Counts a response in the open second, a success (2xx) as served, and its handler time
   * (arrival to last byte, ms) for the second's p95 (call after advancing to `nowMs`).
   */
  countAnswered(nowMs: number, served: boolean, handlerMs: number): void {
    const open = this.#openAt(nowMs);
    open.answered++;
    if (served) open.served++;
    this.#handler.record(handlerMs);
  }

  /** Counts a refusal in the open second (call after advancing to `nowMs`). */
  countShed(nowMs: number): void {
    this.#openAt(nowMs).shed++;
  }

  /** Counts a 503 for want of the database in the open second (call after advancing to `nowMs`). */
  countUnavailable(nowMs: number): void {
    this.#openAt(nowMs).unavailable++;
  }

  /** Counts an expiry (a 504 for a caller whose deadline had passed) in the open second. */
  countExpired(nowMs: number): void {
    this.#openAt(nowMs).expired++;
  }

  /** The newest closed second. */
  last(): TimelinePoint | null {
    return this.#points.at(-1) ?? null;
  }

  /** Closed seconds, oldest first. */
  points(): TimelinePoint[] {
    return this.#points.slice();
  }

  clear(): void {
    this.#points = [];
    this.#open = undefined;
    this.#handler.reset();
    this.#cpuMark = takeMark(this.#clock, this.#probe);
  }

  #openAt(ms: number): OpenSecond {
    if (!this.#open) this.#open = this.#newSecond(Math.floor(ms / 1000), 0, 0);
    return this.#open;
  }

  #newSecond(t: number, checkedOut: number, waiting: number): OpenSecond {
    const pool = new PoolWindow();
    pool.observe(checkedOut, waiting);
    return {
      t,
      pool,
      served: 0,
      shed: 0,
      answered: 0,
      expired: 0,
      unavailable: 0,
      databaseDownMs: 0,
      handlerP95Ms: null,
    };
  }

  /** The open second's p95 handler time, rounded to 0.1 ms (null without responses); empties the histogram. */
  #takeHandlerP95(): number | null {
    const p95 = this.#handler.percentile(95);
    this.#handler.reset();
    return p95 === null ? null : Math.round(p95 * 10) / 10;
  }

  #close(seconds: OpenSecond[], step: string | null): void {
    const mark = takeMark(this.#clock, this.#probe);
    const wallMs = mark.wallMs - this.#cpuMark.wallMs;
    const cpuUs = mark.userUs - this.#cpuMark.userUs + mark.systemUs - this.#cpuMark.systemUs;
    const cpuPct = wallMs > 0 ? Math.round((cpuUs / 1000 / wallMs) * 1000) / 10 : 0;
    this.#cpuMark = mark;
    const admissionBusy = this.#admissionBusy?.();
    for (const s of seconds) {
      this.#points.push({
        t: s.t,
        step,
        served: s.served,
        shed: s.shed,
        answered: s.answered,
        expired: s.expired,
        ...(admissionBusy === undefined ? {} : { admissionBusy }),
        ...(this.#watchesDatabase
          ? { databaseDownMs: Math.round(s.databaseDownMs), unavailable: s.unavailable }
          : {}),
        checkedOutMean: Math.round(s.pool.checkedOutMean * 1000) / 1000,
        waitingMean: Math.round(s.pool.waitingMean * 1000) / 1000,
        waitingMax: s.pool.waitingMax,
        cpuPct,
        handlerP95Ms: s.handlerP95Ms,
      });
    }
    if (this.#points.length > this.#capacity) this.#points.splice(0, this.#points.length - this.#capacity);
  }
}
