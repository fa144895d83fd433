// A Prometheus server's HTTP API read once after a study: `query_range` over the study's
// window at the server's own scrape resolution, for the meters the families read and for
// each declared resource's PromQL, turned into the same scrapes a metrics endpoint gives.
import { type DeclaredField, declaredMeterName } from '../../analysis/resources/declared-resources.ts';
import {
  type ConfigProblem,
  type MeterSample,
  type MeterScrape,
  type MeterSourceStatus,
  PlateauError,
} from '../../contract/index.ts';
import { commonJsExports } from '../../lib/commonjs-exports.ts';
import { httpGet, type MeterLog, type MeterSource, StatusTally, statusInWords } from './meter-source.ts';

/** The defaults of a Prometheus server read, in one place. */
export const PROMETHEUS_SERVER_DEFAULTS = {
  /** When the server's scrape interval cannot be read; also the finest step ever asked for. */
  stepSeconds: 1,
  /**
   * Prometheus refuses a `query_range` of more than 11,000 steps per series; a chunk holds
   * fewer, so a long window is several queries.
   */
  maxStepsPerQuery: 10_000,
  /** One query's deadline: a busy server evaluating a day at 1 s takes seconds, not minutes. */
  timeoutMs: 30_000,
  /** Series kept per query, as a metrics endpoint's cap. */
  seriesCap: 5000,
  /** An answer's size limit: 10,000 steps × a few hundred series of JSON. */
  maxBodyBytes: 512 * 1024 * 1024,
} as const;

/** A declared resource's field given as PromQL, to be read as its own series. */
export interface DeclaredExpression {
  /** The declared resource's name (`orders-pool`). */
  name: string;
  field: DeclaredField;
  promql: string;
}

export interface PrometheusServerOptions {
  /** The server's base URL (`http://prometheus:9090`, or with a path prefix behind a proxy). */
  url: string;
  /** Label matchers in braces that scope the family names to one service (`{job="orders"}`), or ''. */
  match: string;
  /** Meter names the families read (full series names: `_total`, `_bucket` kept). */
  names: string[];
  expressions: DeclaredExpression[];
  /** The study's window, epoch ms. */
  startMs: number;
  endMs: number;
  /** The step; default: the server's scrape interval for the job matched, else 1 s; never under 1 s. */
  stepSeconds?: number;
  log: MeterLog;
  timeoutMs?: number;
  seriesCap?: number;
}

/** How the read went: the status, every failure in words, and the step used. */
export interface PrometheusServerReading {
  status: MeterSourceStatus;
  /** Each failed query's words (the status keeps only the first and the last). */
  errors: string[];
  stepSeconds: number;
  /** Where the step came from. */
  stepFrom: 'option' | 'server' | 'default';
  /** Scrapes written to the log (one per timestamp with samples). */
  scrapes: number;
}

/**
 * Reads the study's window from a Prometheus server and writes one `MeterScrape` per
 * timestamp (source `prometheus <url>`): one `query_range` (chunked past 10,000 steps) for
 * `{__name__=~"<names>",<match>}`, and one per declared expression, its series written under
 * `declaredMeterName(name, field)` with the labels the server gave. A `match` that is not a
 * label-matcher block is a PlateauError (check it up front with `checkPrometheusMatch`);
 * everything else (an unreachable server, an expression the server rejects, with its
 * message) is a failure in the status, never a throw.
 */
export async function readPrometheusServer(
  options: PrometheusServerOptions,
): Promise<PrometheusServerReading> {
  const problem = checkPrometheusMatch(options.match, '--prometheus-match');
  if (problem) throw PlateauError.invalidConfig([problem]);
  const matchers = labelMatchers(options.match);
  const label = `prometheus ${options.url}`;
  const tally = new StatusTally();
  const errors: string[] = [];
  const timeoutMs = options.timeoutMs ?? PROMETHEUS_SERVER_DEFAULTS.timeoutMs;
  const seriesCap = options.seriesCap ?? PROMETHEUS_SERVER_DEFAULTS.seriesCap;
  const api = new PrometheusApi(options.url, timeoutMs);

  let stepSeconds: number = PROMETHEUS_SERVER_DEFAULTS.stepSeconds;
  let stepFrom: PrometheusServerReading['stepFrom'] = 'default';
  if (options.stepSeconds !== undefined) {
    stepSeconds = options.stepSeconds;
    stepFrom = 'option';
  } else {
    const interval = await api.scrapeIntervalSeconds(jobOf(matchers));
    if (interval.unreachable !== null) {
      // Every query would fail the same way (and a silent host would cost each its timeout).
      tally.attempts++;
      tally.fail(interval.unreachable);
      return {
        status: tally.status(label, 'prometheus'),
        errors: [interval.unreachable],
        stepSeconds,
        stepFrom,
        scrapes: 0,
      };
    }
    if (interval.seconds !== null) {
      stepSeconds = interval.seconds;
      stepFrom = 'server';
    }
  }
  // Finer than 1 s only repeats samples: the step analysis is per second.
  stepSeconds = Math.max(PROMETHEUS_SERVER_DEFAULTS.stepSeconds, stepSeconds);

  const fail = (words: string) => {
    tally.fail(words);
    errors.push(words);
  };
  const windows = planQueryWindows(options.startMs, options.endMs, stepSeconds);
  const byTime = new Map<number, MeterSample[]>();
  // name null: the series' own __name__ (the family selector); else the declared meter name.
  const queries: { what: string; promql: string; name: string | null }[] = [];
  const names = options.names.filter((name) => METRIC_NAME.test(name));
  if (names.length > 0) {
    queries.push({ what: 'the family meters', promql: familySelector(names, matchers), name: null });
  }
  for (const expression of options.expressions) {
    const meterName = declaredMeterName(expression.name, expression.field);
    queries.push({
      what: `${expression.name} ${expression.field} (${expression.promql})`,
      promql: expression.promql,
      name: meterName,
    });
  }
  if (windows.length === 0 && queries.length > 0) {
    fail(`the window ends before it starts (${options.startMs} to ${options.endMs} ms)`);
  }

  reading: for (const query of queries) {
    for (const window of windows) {
      tally.attempts++;
      const startedMs = performance.now();
      const answer = await api.queryRange(query.promql, window, stepSeconds);
      if (!answer.ok && !answer.reached) {
        fail(answer.words);
        break reading;
      }
      if (!answer.ok) {
        fail(`${query.what}: ${answer.words}`);
        // The same expression over the next chunk would fail the same way.
        break;
      }
      tally.readTook(performance.now() - startedMs);
      const series = answer.series.length > seriesCap ? answer.series.slice(0, seriesCap) : answer.series;
      if (series.length < answer.series.length) tally.capped(seriesCap, answer.series.length - seriesCap);
      tally.nonFinite += addMatrix(byTime, series, query.name);
    }
  }

  const times = [...byTime.keys()].sort((a, b) => a - b);
  for (const atMs of times) {
    const scrape: MeterScrape = {
      kind: 'plateau.meter-scrape',
      source: label,
      atMs,
      samples: byTime.get(atMs)!,
    };
    options.log.append(scrape);
  }

  if (matchers.length > 0 && tally.failures < tally.attempts) {
    const seen = await api.metricNames(options.match, options.startMs, options.endMs);
    const read = new Set(names);
    const inExpressions = options.expressions.map((e) => e.promql).join(' ');
    for (const name of seen ?? []) {
      if (SCRAPE_SERIES.has(name)) continue;
      if (!read.has(name) && !new RegExp(`\\b${name}\\b`).test(inExpressions)) tally.unrecognised(name);
    }
  }
  return { status: tally.status(label, 'prometheus'), errors, stepSeconds, stepFrom, scrapes: times.length };
}

/**
 * The server as a part of the study: `start()` notes when the window opens, `stop()` reads
 * the window up to now. Prometheus stores a scrape a moment after taking it, so stop it a
 * scrape interval after the last second that matters.
 */
export class PrometheusServerSource implements MeterSource {
  readonly kind = 'prometheus' as const;
  readonly label: string;
  readonly #options: Omit<PrometheusServerOptions, 'startMs' | 'endMs'>;
  readonly #now: () => number;
  #startMs: number | undefined;
  #stopped: Promise<PrometheusServerReading> | undefined;

  /** Checks `match` at once (a PlateauError when it is not a label-matcher block). */
  constructor(options: Omit<PrometheusServerOptions, 'startMs' | 'endMs'>, clock?: { now(): number }) {
    const problem = checkPrometheusMatch(options.match, '--prometheus-match');
    if (problem) throw PlateauError.invalidConfig([problem]);
    this.#options = options;
    this.label = `prometheus ${options.url}`;
    this.#now = clock ? () => clock.now() : Date.now;
  }

  /** Notes the window's start (the first call's time). */
  start(): void {
    this.#startMs ??= this.#now();
  }

  /** Reads the window from start() to now; never throws (see `reading()` for every failure). */
  async stop(): Promise<MeterSourceStatus> {
    return (await this.reading()).status;
  }

  /** The whole reading (every failure in words, the step), reading the window on first call. */
  reading(): Promise<PrometheusServerReading> {
    const endMs = this.#now();
    this.#stopped ??= readPrometheusServer({ ...this.#options, startMs: this.#startMs ?? endMs, endMs });
    return this.#stopped;
  }
}

type Labels = Record<string, string>;

/** Series Prometheus adds to every target itself: not the service's meters, never unrecognised. */
const SCRAPE_SERIES = new Set([
  'up',
  'scrape_duration_seconds',
  'scrape_samples_scraped',
  'scrape_samples_post_metric_relabeling',
  'scrape_series_added',
]);

/** A Prometheus metric name (what can stand in a `__name__` regex without escaping). */
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** One query's time range, in Prometheus's seconds. */
export interface QueryWindow {
  startSeconds: number;
  endSeconds: number;
}

/**
 * Splits [startMs, endMs] into `query_range` windows of at most `maxSteps` steps each (a
 * server refuses more than 11,000), each starting one step after the last one's final
 * evaluation, so no timestamp is read twice or skipped. Empty when the window ends first.
 */
export function planQueryWindows(
  startMs: number,
  endMs: number,
  stepSeconds: number,
  maxSteps: number = PROMETHEUS_SERVER_DEFAULTS.maxStepsPerQuery,
): QueryWindow[] {
  if (!(endMs >= startMs) || !(stepSeconds > 0) || !(maxSteps >= 1)) return [];
  const windows: QueryWindow[] = [];
  const start = startMs / 1000;
  const end = endMs / 1000;
  for (let from = start; from <= end; from += maxSteps * stepSeconds) {
    windows.push({ startSeconds: from, endSeconds: Math.min(end, from + (maxSteps - 1) * stepSeconds) });
  }
  return windows;
}

/**
 * Checks a `--prometheus-match` value: '' (the whole server) or label matchers in braces,
 * `{job="orders"}`, `{job="orders",instance=~"a.*"}`. Returns the problem with a hint, or
 * null, so the CLI can report it with the other settings before the study starts.
 */
export function checkPrometheusMatch(match: string, setting: string): ConfigProblem | null {
  try {
    labelMatchers(match);
    return null;
  } catch (error) {
    return {
      setting,
      message: `${JSON.stringify(match)} is not a label matcher block: ${(error as Error).message}`,
      hint: `give matchers in braces, e.g. '{job="orders"}' or '{job="orders",instance=~"orders-.*"}'`,
    };
  }
}

/** The matchers of a `{...}` block as written (`job="orders"`), in order; throws on a bad block. */
export function labelMatchers(match: string): string[] {
  const text = match.trim();
  if (text === '') return [];
  if (!text.startsWith('{')) throw new Error('it must start with {');
  if (!text.endsWith('}')) throw new Error('it must end with }');
  const matchers: string[] = [];
  let at = 1;
  const skipSpace = () => {
    while (at < text.length && /\s/.test(text[at]!)) at++;
  };
  for (;;) {
    skipSpace();
    if (text[at] === '}') break;
    const name = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(at))?.[0];
    if (!name) throw new Error(`a label name was expected at character ${at + 1}`);
    at += name.length;
    skipSpace();
    const op = /^(=~|!~|!=|=)/.exec(text.slice(at))?.[0];
    if (!op) throw new Error(`=, !=, =~ or !~ was expected after ${name}`);
    at += op.length;
    skipSpace();
    const value = quotedString(text, at);
    if (!value) throw new Error(`a quoted value was expected after ${name}${op}`);
    at += value.length;
    matchers.push(`${name}${op}${value}`);
    skipSpace();
    if (text[at] === ',') {
      at++;
      continue;
    }
    if (text[at] === '}') break;
    throw new Error(`, or } was expected at character ${at + 1}`);
  }
  if (at !== text.length - 1) throw new Error(`unexpected text after } at character ${at + 2}`);
  return matchers;
}

/** The quoted string (PromQL's "…", '…' or `…`) starting at `at`, quotes included; undefined if none. */
function quotedString(text: string, at: number): string | undefined {
  const quote = text[at];
  if (quote !== '"' && quote !== "'" && quote !== '`') return undefined;
  for (let i = at + 1; i < text.length; i++) {
    // Backslash escapes inside "…" and '…'; a raw `…` string has none.
    if (text[i] === '\\' && quote !== '`') i++;
    else if (text[i] === quote) return text.slice(at, i + 1);
  }
  return undefined;
}

/** `{__name__=~"a|b",job="orders"}`: the family names under the user's matchers. */
export function familySelector(names: readonly string[], matchers: readonly string[]): string {
  return `{${[`__name__=~"${names.join('|')}"`, ...matchers].join(',')}}`;
}

/** The job an exact `job="…"` matcher names, whose own scrape interval is then the step. */
function jobOf(matchers: readonly string[]): string | null {
  for (const matcher of matchers) {
    const value = /^job="((?:[^"\\]|\\.)*)"$/.exec(matcher)?.[1];
    if (value !== undefined) return value.replace(/\\(.)/g, '$1');
  }
  return null;
}

/** Prometheus's duration (`15s`, `1m30s`, `500ms`, `1h`) in seconds; null when it is not one. */
export function prometheusDurationSeconds(text: string): number | null {
  const m = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/.exec(
    text.trim(),
  );
  if (!m || text.trim() === '') return null;
  const [y, w, d, h, min, s, ms] = m.slice(1).map((v) => Number(v ?? 0)) as number[];
  return y! * 31_536_000 + w! * 604_800 + d! * 86_400 + h! * 3600 + min! * 60 + s! + ms! / 1000;
}

/**
 * Adds a matrix answer's points to the samples by time (epoch ms), each under `name` or, when
 * null, the series' own `__name__`, its other labels kept. Returns the points left out for a
 * value that is not finite (`NaN`, `+Inf`, `-Inf` as Prometheus writes them).
 */
export function addMatrix(
  byTime: Map<number, MeterSample[]>,
  series: readonly MatrixSeries[],
  name: string | null,
): number {
  let nonFinite = 0;
  for (const { metric, values } of series) {
    const { __name__: seriesName, ...labels } = metric;
    const sampleName = name ?? seriesName ?? '';
    for (const [atSeconds, text] of values) {
      const value = Number(text);
      // Number('+Inf') is NaN: every non-finite point lands here.
      if (!Number.isFinite(value)) {
        nonFinite++;
        continue;
      }
      const atMs = Math.round(atSeconds * 1000);
      const samples = byTime.get(atMs);
      if (samples) samples.push({ name: sampleName, labels, value });
      else byTime.set(atMs, [{ name: sampleName, labels, value }]);
    }
  }
  return nonFinite;
}

/** One series of a matrix answer: its labels and its `[seconds, "value"]` points. */
export interface MatrixSeries {
  metric: Labels;
  values: [number, string][];
}

/** The few calls of Prometheus's HTTP API this source makes, each answer or failure in words. */
class PrometheusApi {
  readonly #base: string;
  readonly #timeoutMs: number;

  constructor(url: string, timeoutMs: number) {
    this.#base = url.replace(/\/+$/, '');
    this.#timeoutMs = timeoutMs;
  }

  /**
   * `scrape_interval` of the job (or the global one) from `/api/v1/status/config`, null when
   * the server does not say (Mimir and Thanos have no such page); `unreachable` when no
   * answer came at all, in words.
   */
  async scrapeIntervalSeconds(
    job: string | null,
  ): Promise<{ seconds: number | null; unreachable: string | null }> {
    const answer = await this.#get('/api/v1/status/config', {});
    if (!answer.ok) return { seconds: null, unreachable: answer.reached ? null : answer.words };
    // yaml is imported here, not with the CLI: only a Prometheus source reads YAML.
    const { parse: parseYaml } = commonJsExports(await import('yaml'));
    return { seconds: this.#intervalIn(answer.data, job, parseYaml), unreachable: null };
  }

  #intervalIn(data: unknown, job: string | null, parseYaml: (text: string) => unknown): number | null {
    try {
      const config = parseYaml(String((data as { yaml?: unknown } | null)?.yaml ?? '')) as {
        global?: { scrape_interval?: unknown };
        scrape_configs?: { job_name?: unknown; scrape_interval?: unknown }[];
      } | null;
      const jobConfig = job === null ? undefined : config?.scrape_configs?.find((c) => c.job_name === job);
      const interval = jobConfig?.scrape_interval ?? config?.global?.scrape_interval;
      return typeof interval === 'string' ? prometheusDurationSeconds(interval) : null;
    } catch {
      // A config the yaml reader cannot follow: the default step is still right, only finer.
      return null;
    }
  }

  /** The matrix of `promql` over `window` at `stepSeconds`. */
  async queryRange(
    promql: string,
    window: QueryWindow,
    stepSeconds: number,
  ): Promise<{ ok: true; series: MatrixSeries[] } | { ok: false; words: string; reached: boolean }> {
    const answer = await this.#get('/api/v1/query_range', {
      query: promql,
      start: window.startSeconds.toFixed(3),
      end: window.endSeconds.toFixed(3),
      step: String(stepSeconds),
    });
    if (!answer.ok) return answer;
    const data = answer.data as { resultType?: unknown; result?: unknown };
    if (data?.resultType !== 'matrix' || !Array.isArray(data.result)) {
      const words = `the answer is not a matrix (resultType ${String(data?.resultType)})`;
      return { ok: false, words, reached: true };
    }
    return { ok: true, series: data.result as MatrixSeries[] };
  }

  /** Metric names under `match` in the window (for the unrecognised list); null when unreadable. */
  async metricNames(match: string, startMs: number, endMs: number): Promise<string[] | null> {
    const answer = await this.#get('/api/v1/label/__name__/values', {
      'match[]': match,
      start: (startMs / 1000).toFixed(3),
      end: (endMs / 1000).toFixed(3),
    });
    return answer.ok && Array.isArray(answer.data) ? (answer.data as string[]) : null;
  }

  /**
   * A GET of the API; `data` of a success, else the server's own error in words. `reached`:
   * an HTTP answer came back (false: refused, timed out, no such host).
   */
  async #get(
    path: string,
    params: Record<string, string>,
  ): Promise<{ ok: true; data: unknown } | { ok: false; words: string; reached: boolean }> {
    const query = new URLSearchParams(params).toString();
    const answer = await httpGet(`${this.#base}${path}${query ? `?${query}` : ''}`, {
      headers: { accept: 'application/json', 'accept-encoding': 'gzip', 'user-agent': 'plateau' },
      timeoutMs: this.#timeoutMs,
      maxBytes: PROMETHEUS_SERVER_DEFAULTS.maxBodyBytes,
      now: Date.now,
    });
    if (!answer.ok)
      return { ok: false, words: `cannot reach ${this.#base}: ${answer.words}`, reached: false };
    let body: { status?: unknown; data?: unknown; errorType?: unknown; error?: unknown } | null = null;
    try {
      body = JSON.parse(answer.body.toString('utf8'));
    } catch {
      // Not JSON: a proxy's page, or a URL that is not a Prometheus server.
    }
    if (body?.status === 'error' || typeof body?.error === 'string') {
      // 400 bad_data (a parse error), 422 execution, 503 timeout: the server's words, as it said them.
      const type = typeof body.errorType === 'string' ? `${body.errorType}: ` : '';
      return {
        ok: false,
        words: `${statusInWords(answer.status, answer.statusText)}: ${type}${String(body.error)}`,
        reached: true,
      };
    }
    if (answer.status < 200 || answer.status > 299) {
      return { ok: false, words: statusInWords(answer.status, answer.statusText), reached: true };
    }
    if (body?.status !== 'success') {
      const type = answer.contentType ? ` (Content-Type ${answer.contentType})` : '';
      return {
        ok: false,
        words: `not a Prometheus API answer${type}: is ${this.#base} a Prometheus server?`,
        reached: true,
      };
    }
    return { ok: true, data: body.data };
  }
}
