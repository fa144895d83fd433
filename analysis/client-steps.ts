// Aggregates client samples per step (or per time window when nothing is tagged).
import type { FailureCounts } from '../contract/index.ts';
import type { ClientSample } from './client-sample.ts';
import { CompletionSeries, type CompletionSeriesState, type WindowCounts } from './completion-series.ts';
import { LatencyCounts } from './latency-counts.ts';
import { SecondSeries, type SecondSeriesState } from './second-series.ts';
import { type StepWindowSpan, stepWindows, type WindowPlan } from './step-windows.ts';
import { bounded, expect, finite, packNumbers, unbounded, unpackNumbers } from './summary-codec.ts';

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
  latency: LatencyCounts;
  /** Latency of the successes (2xx) alone: what an admitted request waited. */
  okLatency: LatencyCounts;
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
      latency: new LatencyCounts(),
      okLatency: new LatencyCounts(),
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

/** A step (or time window) as the client summary keeps it: ClientStep without its window, JSON. */
export interface ClientStepState
  extends Omit<
    ClientStep,
    | 'scenario'
    | 'latency'
    | 'okLatency'
    | 'requestsBySecond'
    | 'okBySecond'
    | 'sendMinS'
    | 'sendMaxS'
    | 'window'
  > {
  scenario: string | null;
  /** LatencyCounts.encode() of latency and okLatency. */
  latency: number[];
  okLatency: number[];
  /** Packed maps (summary-codec.ts). */
  requestsBySecond: number[];
  okBySecond: number[];
  /** null: no duration was seen (±Infinity). */
  sendMinS: number | null;
  sendMaxS: number | null;
}

/**
 * Everything a ClientStepAggregator holds between its last `add` and `close`: what the client
 * summary keeps, so that a run analysed again closes the same aggregator without reading its
 * client file. Groups and maps are in the order they were made (ties in the steps' order and
 * sums over bins depend on it).
 */
export interface ClientPassState {
  windowSeconds: number;
  anyTag: boolean;
  totalRequests: number;
  vusMax: number | null;
  tagged: ClientStepState[];
  /** The scenario/time-window groups; empty once a request carried a step tag (they are never used then). */
  windows: ClientStepState[];
  dropped: number[];
  lagMs: number[];
  cpuPct: number[];
  /** [second, LatencyCounts.encode()] of drain and recovery latency per second. */
  afterRamp: [number, number[]][];
  series: CompletionSeriesState;
  seconds: SecondSeriesState;
}

/**
 * Builds per-step client figures in one pass (add, then close). Requests are counted from
 * `http_reqs`, latency from `http_req_duration`, failures classed by status and k6 error
 * code. Steps come from the `step` tag; when no request carries one, from
 * `<scenario>@<start>` windows of `windowSeconds`. `state()` and `fromState` carry the
 * pass between processes (the client summary).
 */
export class ClientStepAggregator {
  readonly #windowSeconds: number;
  #tagged = new Map<string, Group>();
  #windows = new Map<string, Group>();
  #dropped = new Map<number, number>();
  #lag = new Map<number, number>();
  #cpu = new Map<number, number>();
  #afterRamp = new Map<number, LatencyCounts>();
  #series = new CompletionSeries();
  #seconds = new SecondSeries();
  #anyTag = false;
  #total = 0;
  #vusMax: number | null = null;
  #lastWindowScenario: string | undefined;
  #lastWindowStart = Number.NaN;
  #lastWindowKey = '';

  constructor(options: { windowSeconds?: number } = {}) {
    this.#windowSeconds = options.windowSeconds ?? 10;
  }

  /** The length of the untagged time windows, s. */
  get windowSeconds(): number {
    return this.#windowSeconds;
  }

  add(sample: ClientSample): void {
    switch (sample.metric) {
      case 'http_reqs': {
        this.#total++;
        this.#countRequest(this.#stepGroup(sample).step, sample);
        const window = this.#windowGroup(sample);
        if (window) this.#countRequest(window.step, sample);
        return;
      }
      case 'http_req_duration': {
        const sentS = sample.timeS - Math.max(0, sample.value) / 1000;
        const code = Number(sample.status ?? '0');
        const ok = code >= 200 && code < 300;
        this.#recordDuration(this.#stepGroup(sample).step, sample.value, sentS, ok);
        const window = this.#windowGroup(sample);
        if (window) this.#recordDuration(window.step, sample.value, sentS, ok);
        this.#series.add(sample.timeS, sample.value, ok);
        this.#seconds.addResponse(sample.timeS, sample.value, code);
        if (sample.step === 'drain' || sample.step === 'recovery') {
          const second = Math.floor(sample.timeS);
          let histogram = this.#afterRamp.get(second);
          if (!histogram) {
            histogram = new LatencyCounts();
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

  /** What the pass holds so far, as JSON (before `close`, which adds the windows to the steps). */
  state(): ClientPassState {
    return {
      windowSeconds: this.#windowSeconds,
      anyTag: this.#anyTag,
      totalRequests: this.#total,
      vusMax: this.#vusMax,
      tagged: [...this.#tagged.values()].map((g) => stepState(g.step)),
      windows: [...this.#windows.values()].map((g) => stepState(g.step)),
      dropped: packNumbers(this.#dropped),
      lagMs: packNumbers(this.#lag),
      cpuPct: packNumbers(this.#cpu),
      afterRamp: [...this.#afterRamp].map(([second, h]) => [second, h.encode()]),
      series: this.#series.state(),
      seconds: this.#seconds.state(),
    };
  }

  /**
   * The aggregator `state()` described, ready to close as if its file had just been read.
   * Throws SummaryShapeError (summary-codec.ts) when `state` is not such a state.
   */
  static fromState(state: ClientPassState): ClientStepAggregator {
    expect(typeof state === 'object' && state !== null, 'the pass is not an object');
    const aggregator = new ClientStepAggregator({
      windowSeconds: finite(state.windowSeconds, 'windowSeconds'),
    });
    expect(typeof state.anyTag === 'boolean', 'anyTag is not a boolean');
    aggregator.#anyTag = state.anyTag;
    aggregator.#total = finite(state.totalRequests, 'totalRequests');
    aggregator.#vusMax = state.vusMax === null ? null : finite(state.vusMax, 'vusMax');
    aggregator.#tagged = groupsFromState(state.tagged, 'tagged');
    aggregator.#windows = groupsFromState(state.windows, 'windows');
    aggregator.#dropped = unpackNumbers(state.dropped, 'dropped');
    aggregator.#lag = unpackNumbers(state.lagMs, 'lagMs');
    aggregator.#cpu = unpackNumbers(state.cpuPct, 'cpuPct');
    aggregator.#afterRamp = histogramsFromState(state.afterRamp, 'afterRamp');
    aggregator.#series = CompletionSeries.fromState(state.series);
    aggregator.#seconds = SecondSeries.fromState(state.seconds);
    return aggregator;
  }

  /** The step group of a request sample (`untagged` without a step tag). */
  #stepGroup(sample: ClientSample): Group {
    if (sample.step !== undefined && !this.#anyTag) {
      this.#anyTag = true;
      // Once any request is tagged, steps are by tag: the time windows are never used.
      this.#windows.clear();
    }
    return this.#group(this.#tagged, sample.step ?? 'untagged', sample);
  }

  /** The scenario/time-window group of a request sample, while no request has been tagged. */
  #windowGroup(sample: ClientSample): Group | undefined {
    if (this.#anyTag) return undefined;
    const windowStart = Math.floor(sample.timeS / this.#windowSeconds) * this.#windowSeconds;
    if (windowStart !== this.#lastWindowStart || sample.scenario !== this.#lastWindowScenario) {
      this.#lastWindowStart = windowStart;
      this.#lastWindowScenario = sample.scenario;
      this.#lastWindowKey = `${sample.scenario ?? 'default'}@${windowStart}`;
    }
    return this.#group(this.#windows, this.#lastWindowKey, sample);
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

  #recordDuration(step: ClientStep, durationMs: number, sentS: number, ok: boolean): void {
    step.latency.record(durationMs);
    if (ok) step.okLatency.record(durationMs);
    if (sentS < step.sendMinS) step.sendMinS = sentS;
    if (sentS > step.sendMaxS) step.sendMaxS = sentS;
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

function stepState(step: ClientStep): ClientStepState {
  return {
    key: step.key,
    scenario: step.scenario ?? null,
    firstS: step.firstS,
    lastS: step.lastS,
    requests: step.requests,
    ok2xx: step.ok2xx,
    retries: step.retries,
    failures: step.failures,
    statuses: step.statuses,
    latency: step.latency.encode(),
    okLatency: step.okLatency.encode(),
    requestsBySecond: packNumbers(step.requestsBySecond),
    okBySecond: packNumbers(step.okBySecond),
    sendMinS: unbounded(step.sendMinS),
    sendMaxS: unbounded(step.sendMaxS),
  };
}

const FAILURE_CLASSES = Object.keys(emptyFailures()) as (keyof FailureCounts)[];

function groupsFromState(states: unknown, what: string): Map<string, Group> {
  expect(Array.isArray(states), `${what} is not a list`);
  const groups = new Map<string, Group>();
  for (const state of states as ClientStepState[]) {
    expect(typeof state?.key === 'string', `a group of ${what} has no key`);
    expect(state.scenario === null || typeof state.scenario === 'string', `${state.key}'s scenario`);
    const group = new Group(state.key, state.scenario ?? undefined, finite(state.firstS, 'firstS'));
    const step = group.step;
    step.lastS = finite(state.lastS, 'lastS');
    step.requests = finite(state.requests, 'requests');
    step.ok2xx = finite(state.ok2xx, 'ok2xx');
    step.retries = finite(state.retries, 'retries');
    expect(typeof state.failures === 'object' && state.failures !== null, `${state.key}'s failures`);
    for (const name of FAILURE_CLASSES) step.failures[name] = finite(state.failures[name], name);
    expect(typeof state.statuses === 'object' && state.statuses !== null, `${state.key}'s statuses`);
    for (const [status, count] of Object.entries(state.statuses))
      step.statuses[status] = finite(count, status);
    const latency = LatencyCounts.decode(state.latency);
    const okLatency = LatencyCounts.decode(state.okLatency);
    expect(latency !== undefined && okLatency !== undefined, `${state.key}'s latency`);
    step.latency = latency;
    step.okLatency = okLatency;
    step.requestsBySecond = unpackNumbers(state.requestsBySecond, 'requestsBySecond');
    step.okBySecond = unpackNumbers(state.okBySecond, 'okBySecond');
    step.sendMinS = bounded(state.sendMinS, Number.POSITIVE_INFINITY, 'sendMinS');
    step.sendMaxS = bounded(state.sendMaxS, Number.NEGATIVE_INFINITY, 'sendMaxS');
    groups.set(state.key, group);
  }
  return groups;
}

function histogramsFromState(entries: unknown, what: string): Map<number, LatencyCounts> {
  expect(Array.isArray(entries), `${what} is not a list`);
  const histograms = new Map<number, LatencyCounts>();
  for (const entry of entries as unknown[]) {
    const histogram = Array.isArray(entry) ? LatencyCounts.decode(entry[1]) : undefined;
    expect(histogram !== undefined, `a histogram of ${what} is damaged`);
    histograms.set(finite((entry as unknown[])[0], what), histogram);
  }
  return histograms;
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
