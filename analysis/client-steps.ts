// Aggregates client samples per step (or per time window when nothing is tagged).
import type { FailureCounts } from '../contract/index.ts';
import { LatencyHistogram } from '../lib/latency-histogram.ts';
import type { ClientSample } from './client-sample.ts';
import { CompletionSeries, type WindowCounts } from './completion-series.ts';
import { SecondSeries } from './second-series.ts';
import { type StepWindowSpan, stepWindows, type WindowPlan } from './step-windows.ts';

/** What the client saw for one step. */
export interface ClientStep {
  key: string;
  scenario: string | undefined;
  /** Epoch seconds of the first and last request sample. */
  firstS: number;
  lastS: number;
  requests: number;
  ok2xx: number;
  /** Requests whose `attempt` tag is above 1: retries. */
  retries: number;
  failures: FailureCounts;
  statuses: Record<string, number>;
  latency: LatencyHistogram;
  /** Latency of the successes (2xx) alone: what an admitted request waited. */
  okLatency: LatencyHistogram;
  /** Requests and 2xx per epoch second, for rates that leave out the ramp (`--steady`). */
  requestsBySecond: Map<number, number>;
  okBySecond: Map<number, number>;
  /** Earliest and latest estimated send time (stamp − duration), epoch s. */
  sendMinS: number;
  sendMaxS: number;
  /**
   * The step's window on the client's clock and what completed in it, whichever step the
   * requests were sent in; null for untagged groups (their windows are completion windows).
   */
  window: (StepWindowSpan & WindowCounts) | null;
}

/** The client side of a run, grouped. */
export interface ClientSteps {
  steps: ClientStep[];
  /** Whether requests carried `step` tags (otherwise steps are time windows). */
  tagged: boolean;
  droppedBySecond: Map<number, number>;
  /** p95 latency per epoch second after the ramp (drain and recovery), for recovery time. */
  p95MsAfterRampBySecond: Map<number, number>;
  lagMsBySecond: Map<number, number>;
  cpuPctBySecond: Map<number, number>;
  /** Every http_reqs sample, for a cross-check against other sources. */
  totalRequests: number;
  /** The most VUs the generator had initialised (`vus_max`), null when not in the file. */
  vusMax: number | null;
  /** Completions and requests in flight along the client's clock. */
  series: CompletionSeries;
  /** Sent, served, refused and VUs per second, for the report's charts. */
  seconds: SecondSeries;
  /** How the step windows were found (see stepWindows), and what to tell the reader. */
  windows: { basis: 'plan' | 'tags'; startS: number | null; resolutionS: number; notes: string[] };
}

function emptyFailures(): FailureCounts {
  return {
    shed: 0,
    rateLimited: 0,
    serverErrors: 0,
    expired: 0,
    clientErrors: 0,
    timeouts: 0,
    networkErrors: 0,
  };
}

class Group {
  readonly step: ClientStep;
  constructor(key: string, scenario: string | undefined, timeS: number) {
    this.step = {
      key,
      scenario,
      firstS: timeS,
      lastS: timeS,
      requests: 0,
      ok2xx: 0,
      retries: 0,
      failures: emptyFailures(),
      statuses: {},
      latency: new LatencyHistogram(),
      okLatency: new LatencyHistogram(),
      requestsBySecond: new Map(),
      okBySecond: new Map(),
      sendMinS: Number.POSITIVE_INFINITY,
      sendMaxS: Number.NEGATIVE_INFINITY,
      window: null,
    };
  }
}

/** The metrics the aggregation reads; readers may skip every other row unparsed. */
export const CLIENT_METRICS: ReadonlySet<string> = new Set([
  'http_reqs',
  'http_req_duration',
  'dropped_iterations',
  'engine_lag_ms',
  'engine_cpu_pct',
  'vus_max',
  'vus',
]);

/**
 * Builds per-step client figures in one pass (add, then close). Requests are counted from
 * `http_reqs`, latency from `http_req_duration`, failures classed by status and k6 error
 * code. Steps come from the `step` tag; when no request carries one, from
 * `<scenario>@<start>` windows of `windowSeconds`.
 */
export class ClientStepAggregator {
  readonly #windowSeconds: number;
  readonly #tagged = new Map<string, Group>();
  readonly #windows = new Map<string, Group>();
  readonly #dropped = new Map<number, number>();
  readonly #lag = new Map<number, number>();
  readonly #cpu = new Map<number, number>();
  readonly #afterRamp = new Map<number, LatencyHistogram>();
  readonly #series = new CompletionSeries();
  readonly #seconds = new SecondSeries();
  #anyTag = false;
  #total = 0;
  #vusMax: number | null = null;
  #lastWindowScenario: string | undefined;
  #lastWindowStart = Number.NaN;
  #lastWindowKey = '';

  constructor(options: { windowSeconds?: number } = {}) {
    this.#windowSeconds = options.windowSeconds ?? 10;
  }

  add(sample: ClientSample): void {
    switch (sample.metric) {
      case 'http_reqs':
        this.#total++;
        for (const group of this.#groups(sample)) this.#countRequest(group.step, sample);
        return;
      case 'http_req_duration': {
        const sentS = sample.timeS - Math.max(0, sample.value) / 1000;
        const code = Number(sample.status ?? '0');
        const ok = code >= 200 && code < 300;
        for (const group of this.#groups(sample)) {
          group.step.latency.record(sample.value);
          if (ok) group.step.okLatency.record(sample.value);
          if (sentS < group.step.sendMinS) group.step.sendMinS = sentS;
          if (sentS > group.step.sendMaxS) group.step.sendMaxS = sentS;
        }
        this.#series.add(sample.timeS, sample.value, ok);
        this.#seconds.addResponse(sample.timeS, sample.value, code);
        if (sample.step === 'drain' || sample.step === 'recovery') {
          const second = Math.floor(sample.timeS);
          let histogram = this.#afterRamp.get(second);
          if (!histogram) {
            histogram = new LatencyHistogram();
            this.#afterRamp.set(second, histogram);
          }
          histogram.record(sample.value);
        }
        return;
      }
      case 'vus':
        this.#seconds.addVus(sample.timeS, sample.value);
        return;
      case 'vus_max':
        this.#vusMax = Math.max(this.#vusMax ?? 0, sample.value);
        return;
      case 'dropped_iterations':
        bump(this.#dropped, Math.floor(sample.timeS), sample.value);
        return;
      case 'engine_lag_ms':
        this.#lag.set(
          Math.floor(sample.timeS),
          Math.max(this.#lag.get(Math.floor(sample.timeS)) ?? 0, sample.value),
        );
        return;
      case 'engine_cpu_pct':
        this.#cpu.set(
          Math.floor(sample.timeS),
          Math.max(this.#cpu.get(Math.floor(sample.timeS)) ?? 0, sample.value),
        );
        return;
      default:
    }
  }

  /**
   * Ends the pass. With the run's `plan` the step windows are laid on it; otherwise they
   * are found from the tags alone.
   */
  close(plan?: WindowPlan): ClientSteps {
    const tagged = this.#anyTag;
    const groups = [...(tagged ? this.#tagged : this.#windows).values()].map((g) => g.step);
    groups.sort((a, b) => a.firstS - b.firstS);
    const series = this.#series;
    const windowed = tagged ? groups.filter((g) => g.key !== 'untagged' && Number.isFinite(g.sendMinS)) : [];
    const found = stepWindows(windowed, series.resolutionS, plan);
    for (const step of windowed) {
      const span = found.spans.get(step.key);
      if (span) step.window = { ...span, ...series.window(span.startS, span.endS) };
    }
    const notes = [...found.notes];
    if (tagged && series.resolutionS >= 1) {
      notes.push(
        "the client file's timestamps are whole seconds: served by window is apportioned within each second (write --out csv=fileName=…,timeFormat=unix_milli for exact windows)",
      );
    }
    return {
      steps: groups,
      tagged,
      droppedBySecond: this.#dropped,
      p95MsAfterRampBySecond: new Map([...this.#afterRamp].map(([second, h]) => [second, h.summary().p95])),
      lagMsBySecond: this.#lag,
      cpuPctBySecond: this.#cpu,
      totalRequests: this.#total,
      vusMax: this.#vusMax,
      series,
      seconds: this.#seconds,
      windows: { basis: found.basis, startS: found.startS, resolutionS: series.resolutionS, notes },
    };
  }

  /** The groups a request sample belongs to: its step, and its time window. */
  #groups(sample: ClientSample): Group[] {
    if (sample.step !== undefined) this.#anyTag = true;
    const stepKey = sample.step ?? 'untagged';
    const windowStart = Math.floor(sample.timeS / this.#windowSeconds) * this.#windowSeconds;
    if (windowStart !== this.#lastWindowStart || sample.scenario !== this.#lastWindowScenario) {
      this.#lastWindowStart = windowStart;
      this.#lastWindowScenario = sample.scenario;
      this.#lastWindowKey = `${sample.scenario ?? 'default'}@${windowStart}`;
    }
    const windowKey = this.#lastWindowKey;
    return [this.#group(this.#tagged, stepKey, sample), this.#group(this.#windows, windowKey, sample)];
  }

  #group(map: Map<string, Group>, key: string, sample: ClientSample): Group {
    let group = map.get(key);
    if (!group) {
      group = new Group(key, sample.scenario, sample.timeS);
      map.set(key, group);
    }
    if (sample.timeS < group.step.firstS) group.step.firstS = sample.timeS;
    if (sample.timeS > group.step.lastS) group.step.lastS = sample.timeS;
    return group;
  }

  #countRequest(step: ClientStep, sample: ClientSample): void {
    step.requests++;
    if (sample.attempt !== undefined && sample.attempt !== '1') step.retries++;
    const status = sample.status ?? '0';
    step.statuses[status] = (step.statuses[status] ?? 0) + 1;
    const code = Number(status);
    const second = Math.floor(sample.timeS);
    bump(step.requestsBySecond, second, 1);
    if (code >= 200 && code < 300) {
      step.ok2xx++;
      bump(step.okBySecond, second, 1);
      return;
    }
    if (code === 503) step.failures.shed++;
    else if (code === 429) step.failures.rateLimited++;
    else if (code === 504) step.failures.expired = (step.failures.expired ?? 0) + 1;
    else if (code >= 500) step.failures.serverErrors++;
    else if (code >= 400) step.failures.clientErrors++;
    else if (code === 0) {
      if (sample.errorCode === '1050') step.failures.timeouts++;
      else step.failures.networkErrors++;
    }
  }
}

function bump(map: Map<number, number>, key: number, by: number): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

/** Total failures of all classes. */
export function totalFailures(f: FailureCounts): number {
  return (
    f.shed + f.rateLimited + f.serverErrors + (f.expired ?? 0) + f.clientErrors + f.timeouts + f.networkErrors
  );
}
