// Admission control with hysteresis: refuse new work at the door while the event loop is late.
import { type EventLoopUtilization, monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** The gate's two states. */
export type AdmissionState = 'normal' | 'busy';

/** The signals a Node service's gate can read: event-loop delay (ms) or utilisation (%). */
export const ADMISSION_SIGNALS = ['delay', 'utilization'] as const;
export type AdmissionSignalKind = (typeof ADMISSION_SIGNALS)[number];

/** When the gate changes state, and on what signal. */
export interface AdmissionGateSettings {
  /** Enter `busy` when the signal reaches this (in the signal's unit). */
  high: number;
  /** Return to `normal` only when the signal falls to this or below (below `high`). */
  low: number;
  /** How often the signal is read, ms. */
  sampleMs: number;
  /**
   * A delay signal only: the door turns busy when the reading is overdue by this many ms
   * (see {@link AdmissionGate.admit}); undefined: no such check.
   */
  overdueMs?: number;
}

/** One reading of the saturation signal; each call covers the time since the last. */
export type SaturationSignal = () => number;

/** A change of state, for the log and the metrics. */
export interface AdmissionTransition {
  to: AdmissionState;
  /** The signal that caused it. */
  signal: number;
  /** The watermark it crossed. */
  threshold: number;
}

/**
 * The event loop's delay since the last reading, ms: the larger of two views of it.
 * - The mean of `monitorEventLoopDelay` at 10 ms resolution, less that resolution (it times
 *   its own 10 ms timer, so an idle loop reads 10 ms): how late the loop is on a typical turn.
 *   The mean rather than a high percentile: one long GC pause or one large response should
 *   not close the door; a loop that is late on every turn should.
 * - How late this reading itself is, against `intervalMs` after the previous one: a loop
 *   blocked for the whole interval lets no histogram sample be taken, and would otherwise
 *   read as idle.
 */
export function eventLoopDelaySignal(intervalMs: number): { read: SaturationSignal; close(): void } {
  const resolutionMs = 10;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  let lastMs = performance.now();
  return {
    read() {
      const now = performance.now();
      const lateMs = now - lastMs - intervalMs;
      lastMs = now;
      const meanMs = histogram.count > 0 ? histogram.mean / 1e6 - resolutionMs : 0;
      histogram.reset();
      return Math.max(0, meanMs, lateMs);
    },
    close: () => histogram.disable(),
  };
}

/**
 * The event loop's utilisation since the last reading, % (Node's
 * `performance.eventLoopUtilization`): the share of the time the loop was running callbacks.
 * Unlike the delay, it sees a loop that is full of short callbacks (work serialised through
 * a pool), which never makes one timer very late.
 */
export function eventLoopUtilizationSignal(): { read: SaturationSignal; close(): void } {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return {
    read() {
      const now = performance.eventLoopUtilization();
      const delta = performance.eventLoopUtilization(now, last);
      last = now;
      return delta.utilization * 100;
    },
    close() {},
  };
}

/**
 * A load monitor with hysteresis. Every `sampleMs` it reads a saturation signal (for a
 * Node service, event-loop delay). It enters `busy` when the signal reaches `highMs` and
 * returns to `normal` only when it falls to `lowMs` or below, so a signal that wanders
 * between the two watermarks does not make it flap. While busy, `admit()` says no: the
 * caller refuses the request at the door (503 + Retry-After) before any expensive step.
 * Work already admitted is not affected.
 *
 * `observe` is the whole state machine and takes the signal as an argument, so tests drive
 * it without a clock or real load; `start` only reads the signal on a timer.
 */
export class AdmissionGate {
  readonly settings: AdmissionGateSettings;
  #state: AdmissionState = 'normal';
  #lastSignal = 0;
  #transitions = { busy: 0, normal: 0 };
  #timer: NodeJS.Timeout | undefined;
  /** When the signal was last read (ms on `#now`'s clock), while the timer runs. */
  #lastReadingMs: number | undefined;
  #now: () => number = () => performance.now();
  readonly #onTransition: (t: AdmissionTransition) => void;

  constructor(settings: AdmissionGateSettings, onTransition: (t: AdmissionTransition) => void = () => {}) {
    if (!(settings.low < settings.high))
      throw new RangeError(
        `the low watermark (${settings.low}) must be below the high one (${settings.high})`,
      );
    this.settings = settings;
    this.#onTransition = onTransition;
  }

  get state(): AdmissionState {
    return this.#state;
  }

  /** The last signal read. */
  get lastSignal(): number {
    return this.#lastSignal;
  }

  /** Transitions so far, by the state entered. */
  get transitions(): { busy: number; normal: number } {
    return { ...this.#transitions };
  }

  /**
   * Whether a new request may come in at `nowMs`. Besides the state, the door checks the
   * timer itself: a reading overdue by the high watermark or more means the event loop is
   * late right now, in the middle of a long turn that the timer cannot interrupt, and the
   * gate turns busy at once. Without this a loop that takes many requests in one turn would
   * admit them all before the next reading.
   */
  admit(nowMs: number = this.#now()): boolean {
    const limit = this.settings.overdueMs;
    if (this.#state === 'normal' && limit !== undefined && this.#lastReadingMs !== undefined) {
      const overdueMs = nowMs - this.#lastReadingMs - this.settings.sampleMs;
      if (overdueMs >= limit) this.#enter('busy', overdueMs, limit);
    }
    return this.#state === 'normal';
  }

  /** Notes that the signal was read at `nowMs`, for {@link admit}'s overdue check. */
  noteReading(nowMs: number): void {
    this.#lastReadingMs = nowMs;
  }

  /** Takes one reading of the signal and changes state if it crossed a watermark. */
  observe(signal: number): void {
    this.#lastSignal = signal;
    const { high, low } = this.settings;
    if (this.#state === 'normal' && signal >= high) this.#enter('busy', signal, high);
    else if (this.#state === 'busy' && signal <= low) this.#enter('normal', signal, low);
  }

  /** Reads `signal` every `sampleMs` until `stop`; `now` is the clock of the overdue check. Idempotent. */
  start(signal: SaturationSignal, now: () => number = () => performance.now()): void {
    this.#now = now;
    this.noteReading(now());
    this.#timer ??= setInterval(() => {
      this.observe(signal());
      this.noteReading(now());
    }, this.settings.sampleMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#lastReadingMs = undefined;
  }

  #enter(state: AdmissionState, signal: number, threshold: number): void {
    this.#state = state;
    this.#transitions[state]++;
    this.#onTransition({ to: state, signal, threshold });
  }
}
