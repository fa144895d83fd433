// The client side second by second, for the report's charts: what was sent, what completed.
import type { LatencySummary } from '../contract/index.ts';
import { packNumbers, packRecords, unpackNumbers, unpackRecords } from './summary-codec.ts';

/** One second of the client's clock (epoch second `t`, i.e. [t, t + 1)). */
export interface ClientSecond {
  t: number;
  /** Requests sent in the second (send time = stamp − duration), whatever their step tag. */
  sent: number;
  /** 2xx responses that completed in the second. */
  served: number;
  /** Responses of any status (and transport failures) that completed in the second. */
  answered: number;
  /** 503 answers (load shedding) that completed in the second. */
  shed: number;
  /** 504 answers (the request's deadline had passed) that completed in the second. */
  expired: number;
  /** Latency of the responses completed in the second, ms; null when none completed. */
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  /** Iterations the generator could not start in the second. */
  dropped: number;
  /** The generator's event-loop lag (max in the second, ms), CPU (% of what it can use) and VUs; null when not reported. */
  lagMs: number | null;
  cpuPct: number | null;
  vus: number | null;
}

/** What the other collectors of the same pass hold per epoch second, merged into the seconds. */
export interface SecondExtras {
  /** Latency of the responses completed in each second (CompletionSeries keeps these histograms). */
  latency: ReadonlyMap<number, LatencySummary>;
  dropped: ReadonlyMap<number, number>;
  lagMs: ReadonlyMap<number, number>;
  cpuPct: ReadonlyMap<number, number>;
}

/** A SecondSeries as the client summary keeps it: [second step, sent, served, answered, shed, expired]… and [second step, VUs]… */
export interface SecondSeriesState {
  counts: number[];
  vus: number[];
}

interface Counts {
  sent: number;
  served: number;
  answered: number;
  shed: number;
  expired: number;
}

/**
 * Counts per epoch second, fed one sample at a time while the client file is read (add,
 * then seconds()). Memory is bounded by the run's length, not its request count. Latency
 * is not recorded here: the completion series already keeps a histogram per completed
 * second, and recording every duration twice would slow the pass for nothing.
 */
export class SecondSeries {
  #counts = new Map<number, Counts>();
  #vus = new Map<number, number>();
  // Samples arrive nearly in time order: the last second touched is usually the next one.
  #lastT = Number.NaN;
  #last: Counts | undefined;

  /** One response (or transport failure, status 0) that ended at `endS` after `durationMs`. */
  addResponse(endS: number, durationMs: number, status: number): void {
    const done = this.#at(Math.floor(endS));
    done.answered++;
    if (status >= 200 && status < 300) done.served++;
    else if (status === 503) done.shed++;
    else if (status === 504) done.expired++;
    this.#at(Math.floor(endS - Math.max(0, durationMs) / 1000)).sent++;
  }

  /** Everything added so far, for the client summary (JSON). */
  state(): SecondSeriesState {
    return {
      counts: packRecords(this.#counts, (c) => [c.sent, c.served, c.answered, c.shed, c.expired]),
      vus: packNumbers(this.#vus),
    };
  }

  /** The series `state()` described; SummaryShapeError when it is not such a state. */
  static fromState(state: SecondSeriesState): SecondSeries {
    const series = new SecondSeries();
    series.#counts = unpackRecords(
      state?.counts,
      5,
      ([sent, served, answered, shed, expired]) => ({
        sent: sent!,
        served: served!,
        answered: answered!,
        shed: shed!,
        expired: expired!,
      }),
      'counts by second',
    );
    series.#vus = unpackNumbers(state?.vus, 'VUs by second');
    return series;
  }

  /** A `vus` sample: the VUs active at `timeS` (the highest of a second is kept). */
  addVus(timeS: number, value: number): void {
    const t = Math.floor(timeS);
    this.#vus.set(t, Math.max(this.#vus.get(t) ?? 0, value));
  }

  /**
   * Every second from the first to the last anything was seen in, oldest first: counts
   * zero-filled, gauges null where nothing was reported.
   */
  seconds(extras: SecondExtras): ClientSecond[] {
    const keys = [
      ...this.#counts.keys(),
      ...this.#vus.keys(),
      ...extras.dropped.keys(),
      ...extras.lagMs.keys(),
      ...extras.cpuPct.keys(),
    ];
    if (keys.length === 0) return [];
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    for (const t of keys) {
      if (t < first) first = t;
      if (t > last) last = t;
    }
    const out: ClientSecond[] = [];
    for (let t = first; t <= last; t++) {
      const c = this.#counts.get(t);
      const latency = extras.latency.get(t);
      const some = latency !== undefined && latency.count > 0;
      out.push({
        t,
        sent: c?.sent ?? 0,
        served: c?.served ?? 0,
        answered: c?.answered ?? 0,
        shed: c?.shed ?? 0,
        expired: c?.expired ?? 0,
        p50Ms: some ? latency.p50 : null,
        p95Ms: some ? latency.p95 : null,
        p99Ms: some ? latency.p99 : null,
        dropped: extras.dropped.get(t) ?? 0,
        lagMs: extras.lagMs.get(t) ?? null,
        cpuPct: extras.cpuPct.get(t) ?? null,
        vus: this.#vus.get(t) ?? null,
      });
    }
    return out;
  }

  #at(t: number): Counts {
    if (t === this.#lastT) return this.#last!;
    let counts = this.#counts.get(t);
    if (!counts) {
      counts = { sent: 0, served: 0, answered: 0, shed: 0, expired: 0 };
      this.#counts.set(t, counts);
    }
    this.#lastT = t;
    this.#last = counts;
    return counts;
  }
}
