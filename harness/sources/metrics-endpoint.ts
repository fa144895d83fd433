// A Prometheus text endpoint (`/metrics`, `/actuator/prometheus`) read once a second during
// a study, as a Prometheus server would scrape it, its kept samples written to meters.ndjson.
import { Agent } from 'undici';
import { parsePrometheusText } from '../../analysis/resources/prometheus-text.ts';
import type { MeterSourceStatus } from '../../contract/index.ts';
import { httpGet, type MeterLog, type MeterSource, StatusTally, statusInWords } from './meter-source.ts';

/** The defaults of a metrics endpoint source, in one place. */
export const METRICS_ENDPOINT_DEFAULTS = {
  /** Prometheus's own finest usual scrape interval, and the resolution of the step analysis. */
  intervalMs: 1000,
  /** Below the interval, so a slow endpoint fails a reading rather than skipping the next. */
  timeoutMs: 800,
  /** Kept series per reading: a label gone wild must not fill the disk or the harness's memory. */
  seriesCap: 5000,
  /** Prometheus's default `body_size_limit` is unlimited; a study's harness needs one. */
  maxBodyBytes: 10 * 1024 * 1024,
} as const;

/** What Prometheus 2 asks for: the text format, not OpenMetrics or protobuf. */
const ACCEPT = 'text/plain;version=0.0.4;q=1,*/*;q=0.1';

export interface MetricsEndpointOptions {
  log: MeterLog;
  /** Whether a meter name (the full series name, `_total` and `_bucket` kept) is read by anyone. */
  keep: (name: string) => boolean;
  intervalMs?: number;
  timeoutMs?: number;
  seriesCap?: number;
  maxBodyBytes?: number;
  /** Epoch ms; the time written with each reading. */
  clock?: { now(): number };
}

/**
 * Scrapes one Prometheus text endpoint every `intervalMs` from `start()` to `stop()`, one
 * reading in flight at most (a slow endpoint skips ticks, counted in `skipped`), and writes
 * the samples `keep` accepts, stamped with the time the answer's headers arrived. Names it
 * does not keep are listed as unrecognised; more than `seriesCap` kept series in one reading
 * keeps the first `seriesCap` and notes the overflow. Every failure (connection refused,
 * HTTP 404 Not Found, not Prometheus text: …, timed out after 800 ms, body over 10 MB) is
 * counted with its words; nothing it meets is thrown.
 */
export class MetricsEndpointSource implements MeterSource {
  readonly kind = 'metrics' as const;
  readonly label: string;
  readonly url: string;
  readonly #options: Required<Omit<MetricsEndpointOptions, 'clock'>> & { now: () => number };
  readonly #tally = new StatusTally();
  /** One connection, kept alive between readings, as Prometheus holds one per target. */
  readonly #agent: Agent;
  readonly #kept = new Map<string, boolean>();
  #timer: NodeJS.Timeout | undefined;
  #reading: Promise<void> | undefined;
  #state: 'new' | 'running' | 'stopped' = 'new';
  #stopped: Promise<MeterSourceStatus> | undefined;

  constructor(url: string, options: MetricsEndpointOptions) {
    this.url = url;
    this.label = `metrics ${url}`;
    const clock = options.clock;
    this.#options = {
      log: options.log,
      keep: options.keep,
      intervalMs: options.intervalMs ?? METRICS_ENDPOINT_DEFAULTS.intervalMs,
      timeoutMs: options.timeoutMs ?? METRICS_ENDPOINT_DEFAULTS.timeoutMs,
      seriesCap: options.seriesCap ?? METRICS_ENDPOINT_DEFAULTS.seriesCap,
      maxBodyBytes: options.maxBodyBytes ?? METRICS_ENDPOINT_DEFAULTS.maxBodyBytes,
      now: clock ? () => clock.now() : Date.now,
    };
    this.#agent = new Agent({ connections: 1, connect: { timeout: this.#options.timeoutMs } });
  }

  /** Reads now, then every interval. A second call, or a call after stop(), does nothing. */
  start(): void {
    if (this.#state !== 'new') return;
    this.#state = 'running';
    this.#tick();
    // Unref'd: a source left running must not keep the process alive on its own.
    this.#timer = setInterval(() => this.#tick(), this.#options.intervalMs).unref();
  }

  /**
   * Stops the ticks, lets the reading in flight finish (at most `timeoutMs`), closes the
   * connection and resolves with the status. Safe to call twice (the same status).
   */
  stop(): Promise<MeterSourceStatus> {
    this.#stopped ??= (async () => {
      this.#state = 'stopped';
      clearInterval(this.#timer);
      await this.#reading;
      await this.#agent.destroy().catch(() => undefined);
      return this.#tally.status(this.label, this.kind);
    })();
    return this.#stopped;
  }

  /** The status so far, for a progress line while the study runs. */
  get status(): MeterSourceStatus {
    return this.#tally.status(this.label, this.kind);
  }

  #tick(): void {
    if (this.#state !== 'running') return;
    if (this.#reading) {
      this.#tally.skipped++;
      return;
    }
    this.#reading = this.#read().finally(() => {
      this.#reading = undefined;
    });
  }

  async #read(): Promise<void> {
    const { log, seriesCap, timeoutMs, maxBodyBytes, now } = this.#options;
    this.#tally.attempts++;
    const startedMs = performance.now();
    try {
      const answer = await httpGet(this.url, {
        headers: { accept: ACCEPT, 'accept-encoding': 'gzip', 'user-agent': 'plateau' },
        timeoutMs,
        maxBytes: maxBodyBytes,
        now,
        dispatcher: this.#agent,
      });
      if (!answer.ok) return this.#tally.fail(answer.words);
      if (answer.status < 200 || answer.status > 299) {
        return this.#tally.fail(statusInWords(answer.status, answer.statusText));
      }
      const parsed = parsePrometheusText(answer.body.toString('utf8'), { keep: this.#keep });
      for (const name of parsed.skippedNames) this.#tally.unrecognised(name);
      if (parsed.error !== null) {
        // `not Prometheus text: the body starts with "<html>"`; the type says what it was instead.
        const type = answer.contentType.startsWith('text/plain')
          ? ''
          : ` (Content-Type ${answer.contentType})`;
        return this.#tally.fail(`${parsed.error}${type}`);
      }
      this.#tally.nonFinite += parsed.dropped.nonFinite;
      this.#tally.invalidLines += parsed.dropped.invalidLines;
      let samples = parsed.samples;
      if (samples.length > seriesCap) {
        this.#tally.capped(seriesCap, samples.length - seriesCap);
        samples = samples.slice(0, seriesCap);
      }
      log.append({ kind: 'plateau.meter-scrape', source: this.label, atMs: answer.atMs, samples });
      this.#tally.readTook(performance.now() - startedMs);
    } catch (error) {
      // A parser or keep-filter bug: still a failed reading, never a failed study.
      this.#tally.fail(`read failed: ${(error as Error).message}`);
    }
  }

  /** `keep`, asked once per name: an endpoint repeats the same few hundred names every second. */
  readonly #keep = (name: string): boolean => {
    let kept = this.#kept.get(name);
    if (kept === undefined) {
      kept = this.#options.keep(name);
      // Bounded: a name explosion re-asks `keep` rather than grow the map.
      if (this.#kept.size < 10_000) this.#kept.set(name, kept);
    }
    return kept;
  };
}
