// Once a second during the load: the service's newest closed second and the generator's
// counters, turned into per-second figures for the progress line.
import { request } from 'undici';
import type { ServerLiveReport } from '../../contract/index.ts';
import { type LoadApiClient, type LoadCounters, STATUS_RUNNING } from './load-api.ts';
import type { StudyProgress } from './progress-line.ts';

/** One reading of both sides. */
export interface LiveSample {
  /** The service's `GET /steps/live`, when it answered. */
  server?: ServerLiveReport;
  /** The generator's per-second figures, once two readings exist. */
  load?: {
    sentPerSec: number;
    droppedPerSec: number;
    vus: number;
  };
  /** When the generator was first seen running its scenarios (harness clock, ms). */
  runningSinceMs?: number;
}

/**
 * Requests and drops per second between two readings of the counters: the difference over
 * the time between the readings, so a late poll does not show a spike. Undefined when they
 * are not in order.
 */
export function perSecond(
  before: LoadCounters,
  after: LoadCounters,
): { sentPerSec: number; droppedPerSec: number } | undefined {
  const seconds = (after.atMs - before.atMs) / 1000;
  if (seconds <= 0 || after.httpReqs < before.httpReqs) return undefined;
  return {
    sentPerSec: (after.httpReqs - before.httpReqs) / seconds,
    droppedPerSec: Math.max(0, after.droppedIterations - before.droppedIterations) / seconds,
  };
}

/** The service's live figures; 'absent' when it has no `/steps/live` (then stop asking). */
export async function fetchLive(url: string): Promise<ServerLiveReport | 'absent' | undefined> {
  try {
    const res = await request(`${url}/steps/live`, { headersTimeout: 2000, bodyTimeout: 2000 });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return res.statusCode === 404 ? 'absent' : undefined;
    }
    const body = (await res.body.json()) as ServerLiveReport;
    return body.kind === 'plateau.server-live' ? body : 'absent';
  } catch {
    return undefined;
  }
}

/**
 * Polls both sides every `intervalMs`. The service is read through `GET /steps/live`, constant
 * time on it (polling the whole `/steps` report stalled its event loop and lowered the
 * plateau it measured: docs/instrumentation.md, "Reading it during a run"); the generator
 * through three small REST answers. A poll still in flight when the next is due is skipped.
 */
export class LiveFigures {
  readonly #serviceUrl: string | undefined;
  readonly #load: LoadApiClient | undefined;
  #polling: boolean;
  #previous: LoadCounters | undefined;
  #runningSinceMs: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  /** `serviceUrl` undefined: the service has no `/steps`; `load` undefined: no REST API to read. */
  constructor(options: { serviceUrl?: string; load?: LoadApiClient }) {
    this.#serviceUrl = options.serviceUrl;
    this.#load = options.load;
    this.#polling = options.serviceUrl !== undefined;
  }

  /** Reads both sides once. */
  async sample(): Promise<LiveSample> {
    const [live, counters] = await Promise.all([
      this.#polling && this.#serviceUrl ? fetchLive(this.#serviceUrl) : undefined,
      this.#load?.read(),
    ]);
    if (live === 'absent') this.#polling = false;
    const sample: LiveSample = {};
    if (live && live !== 'absent') sample.server = live;
    if (counters) {
      if (counters.status >= STATUS_RUNNING) this.#runningSinceMs ??= counters.atMs;
      const rates = this.#previous ? perSecond(this.#previous, counters) : undefined;
      if (rates) sample.load = { ...rates, vus: counters.vus };
      this.#previous = counters;
    }
    if (this.#runningSinceMs !== undefined) sample.runningSinceMs = this.#runningSinceMs;
    return sample;
  }

  /** Calls `onSample` with a reading every `intervalMs` until stop(); never after it. */
  start(onSample: (sample: LiveSample) => void, intervalMs = 1000): void {
    let inFlight = false;
    this.#timer ??= setInterval(async () => {
      if (inFlight) return;
      inFlight = true;
      try {
        const sample = await this.sample();
        if (!this.#stopped) onSample(sample);
      } finally {
        inFlight = false;
      }
    }, intervalMs);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * Whether the load is under way: the generator said its scenarios run, or the service has
 * seen a tagged request. Before that (the generator loading its script, initializing VUs,
 * warming up) there is no step to show, only a phase.
 */
export function loadStarted(sample: LiveSample): boolean {
  return (
    sample.runningSinceMs !== undefined || (sample.server?.last?.step ?? sample.server?.step ?? null) !== null
  );
}

/** The phase shown until loadStarted. */
export const STARTING_PHASE = 'starting the load generator';

/** What the plan says about now: the step, its target rate, time left, and the pool's size. */
export interface PlannedNow {
  step?: string;
  offeredPerSec?: number;
  secondsLeft: number;
  poolMax?: number | null;
}

/**
 * The progress snapshot of one sample: the plan's step and offered rate, the generator's
 * sent and dropped, the service's served, shed, p95, pool and waiting (its newest closed
 * second). What a side did not answer is left out.
 */
export function progressFromSample(sample: LiveSample, planned: PlannedNow): StudyProgress {
  const progress: StudyProgress = { phase: 'load', secondsLeft: planned.secondsLeft };
  if (planned.step !== undefined) progress.step = planned.step;
  if (planned.offeredPerSec !== undefined) progress.offeredPerSec = planned.offeredPerSec;
  if (sample.load) {
    progress.sentPerSec = sample.load.sentPerSec;
    progress.droppedPerSec = sample.load.droppedPerSec;
  }
  const last = sample.server?.last;
  if (last) {
    progress.servedPerSec = last.served;
    progress.shedPerSec = last.shed;
    // A service that predates the per-second p95 has no such key: leave it out.
    if (last.handlerP95Ms !== undefined) progress.p95Ms = last.handlerP95Ms;
    progress.checkedOut = last.checkedOutMean;
    progress.waiting = last.waitingMean;
    if (planned.poolMax !== undefined) progress.poolMax = planned.poolMax;
  }
  return progress;
}
