// What every source of meters shares: the part interface a study starts and stops, the
// meters.ndjson log the readings go to, and the words a failed reading is reported in.
// Reading the log back is analysis's (analysis/resources/meter-log.ts), re-exported here.
import { createWriteStream, type WriteStream } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { type Dispatcher, request } from 'undici';
import { METER_LOG_FILE } from '../../analysis/resources/meter-log.ts';
import type { ConfigProblem, MeterScrape, MeterSourceKind, MeterSourceStatus } from '../../contract/index.ts';

export { METER_LOG_FILE, readMeterLog } from '../../analysis/resources/meter-log.ts';

/**
 * A source of meters during a study (k6's output shape: describe, start, stop). `start()`
 * begins reading in the background and returns at once; `stop()` ends it, waits for nothing
 * longer than the reading in flight (bounded by its timeout), and resolves with how the source
 * fared. Neither throws: a source that cannot read says so in its status.
 */
export interface MeterSource {
  /** `metrics http://127.0.0.1:8080/metrics`: the `source` of every scrape it writes. */
  readonly label: string;
  readonly kind: MeterSourceKind;
  start(): void;
  stop(): Promise<MeterSourceStatus>;
}

/** `<runDir>/meters.ndjson`. */
export function meterLogPath(runDir: string): string {
  return join(runDir, METER_LOG_FILE);
}

/**
 * Appends `MeterScrape`s to a file, one JSON object per line, for every source of a run
 * (one stream, so lines from different sources never interleave). A study must never fail
 * because its monitoring did: the first write failure (a full disk, a missing directory) is
 * kept in `error` and every later scrape is counted in `lost`, never thrown.
 */
export class MeterLog {
  readonly path: string;
  readonly #stream: WriteStream;
  #error: string | null = null;
  #written = 0;
  #lost = 0;
  #closed: Promise<void> | undefined;

  /** Opens `path` for appending (created when absent); a failure to open lands in `error`. */
  constructor(path: string) {
    this.path = path;
    this.#stream = createWriteStream(path, { flags: 'a' });
    this.#stream.on('error', (error: NodeJS.ErrnoException) => {
      this.#error ??= `cannot write ${path}: ${error.message}`;
    });
  }

  /** Writes one scrape as one line; after a write failure it only counts the scrape as lost. */
  append(scrape: MeterScrape): void {
    if (this.#error !== null || this.#closed || this.#stream.destroyed) {
      this.#lost++;
      return;
    }
    this.#stream.write(`${JSON.stringify(scrape)}\n`);
    this.#written++;
  }

  /** The first write failure in words (`cannot write …/meters.ndjson: ENOSPC: …`), or null. */
  get error(): string | null {
    return this.#error;
  }

  /** Scrapes handed to the file (a failure later may still have kept some from the disk). */
  get written(): number {
    return this.#written;
  }

  /** Scrapes dropped because the file had already failed. */
  get lost(): number {
    return this.#lost;
  }

  /** Flushes and closes the file; resolves (never rejects) once it is closed or has failed. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      if (this.#stream.destroyed) return resolve();
      this.#stream.once('close', () => resolve());
      this.#stream.end();
    });
    return this.#closed;
  }
}

/**
 * Checks a source URL given on the command line or in plateau.config (`setting` names it in
 * the problem): an absolute http(s) URL. Returns the problem, or null when it is fine, so
 * the caller can report every bad setting at once before the study starts.
 */
export function checkSourceUrl(url: string, setting: string): ConfigProblem | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { setting, message: `${JSON.stringify(url)} is not a URL`, hint: 'give http://host:port/path' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return {
      setting,
      message: `${url} is not an http(s) URL`,
      hint: 'give http://host:port/path',
    };
  }
  return null;
}

/** What one GET came back with: an answer (any status), or a failure in words. */
export type HttpReading =
  | {
      ok: true;
      status: number;
      statusText: string;
      contentType: string;
      /** When the answer's headers arrived, epoch ms on the reader's clock. */
      atMs: number;
      /** The body, gunzipped when it came gzipped. */
      body: Buffer;
    }
  | { ok: false; words: string };

const gunzipAsync = promisify(gunzip);

/**
 * GETs `url` within `timeoutMs` (connect, headers and body together), reading at most
 * `maxBytes` of body (after gunzip, so a small compressed answer cannot blow up the
 * harness's memory). Never throws: a refused connection, the deadline, an oversized or
 * undecodable body come back as `{ ok: false, words }`; any HTTP status comes back as an
 * answer, so the caller can read an error body (Prometheus's API explains a 400 in JSON).
 */
export async function httpGet(
  url: string,
  options: {
    headers: Record<string, string>;
    timeoutMs: number;
    maxBytes: number;
    now: () => number;
    dispatcher?: Dispatcher;
  },
): Promise<HttpReading> {
  const controller = new AbortController();
  let timedOut: { ms: number } | null = null;
  const timer = setTimeout(() => {
    timedOut = { ms: options.timeoutMs };
    controller.abort();
  }, options.timeoutMs);
  try {
    const res = await request(url, {
      method: 'GET',
      headers: options.headers,
      signal: controller.signal,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    const atMs = options.now();
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of res.body) {
      bytes += (chunk as Buffer).length;
      if (bytes > options.maxBytes) {
        res.body.destroy();
        return { ok: false, words: `body over ${sizeInWords(options.maxBytes)}` };
      }
      chunks.push(chunk as Buffer);
    }
    let body = Buffer.concat(chunks);
    const encoding = String(res.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding === 'gzip' || encoding === 'x-gzip') {
      try {
        body = await gunzipAsync(body, { maxOutputLength: options.maxBytes });
      } catch (error) {
        const words =
          (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
            ? `body over ${sizeInWords(options.maxBytes)}`
            : `gzip body that does not decode (${(error as Error).message})`;
        return { ok: false, words };
      }
    } else if (encoding !== 'identity' && encoding !== '') {
      return { ok: false, words: `body in ${encoding} encoding, which was not asked for` };
    }
    return {
      ok: true,
      status: res.statusCode,
      statusText: res.statusText,
      contentType: String(res.headers['content-type'] ?? ''),
      atMs,
      body,
    };
  } catch (error) {
    return { ok: false, words: describeReadFailure(error, timedOut) };
  } finally {
    clearTimeout(timer);
  }
}

/** `10 MB` for 10 × 1024 × 1024 bytes. */
function sizeInWords(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`;
}

/** `HTTP 404 Not Found`: the status and the server's own words for it. */
export function statusInWords(status: number, statusText: string): string {
  const words = statusText || STATUS_CODES[status];
  return `HTTP ${status}${words ? ` ${words}` : ''}`;
}

/**
 * A failed HTTP reading in the words a status shows: `connection refused`, `timed out after
 * 800 ms`, `host not found`… `timedOut` is the reader's own deadline having fired (the
 * error undici then throws says only that the request was aborted).
 */
export function describeReadFailure(error: unknown, timedOut: { ms: number } | null): string {
  if (timedOut) return `timed out after ${timedOut.ms} ms`;
  // undici puts the socket's error as the cause of a `fetch failed`-style wrapper in some paths.
  const err = error as (NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException }) | null;
  const code = err?.code ?? err?.cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'UND_ERR_SOCKET':
      return 'connection closed before the answer';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connect timed out';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'timed out';
    default:
      return err?.message ? `read failed: ${err.message}` : `read failed: ${String(error)}`;
  }
}

/** Median of `values` (the mean of the middle two for an even count); null when empty. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Counts readings and failures for a status: the first and the last failure in words, the
 * median read time, the unrecognised names (the 50 first in sort order), the largest
 * series overflow. Each source owns one.
 */
export class StatusTally {
  attempts = 0;
  failures = 0;
  skipped = 0;
  nonFinite = 0;
  invalidLines = 0;
  #firstError: string | null = null;
  #lastError: string | null = null;
  readonly #readMs: number[] = [];
  readonly #unrecognised = new Set<string>();
  #seriesCapped: { cap: number; dropped: number } | null = null;

  /** A reading that failed, in words. */
  fail(words: string): void {
    this.failures++;
    this.#firstError ??= words;
    this.#lastError = words;
  }

  /** How long a successful reading took, ms. */
  readTook(ms: number): void {
    this.#readMs.push(ms);
  }

  /** A meter name nobody reads. Bounded: a name explosion must not grow the harness's memory. */
  unrecognised(name: string): void {
    if (this.#unrecognised.size < UNRECOGNISED_KEPT) this.#unrecognised.add(name);
  }

  /** One reading had `dropped` series over `cap`: the largest overflow is the one reported. */
  capped(cap: number, dropped: number): void {
    if (dropped > (this.#seriesCapped?.dropped ?? 0)) this.#seriesCapped = { cap, dropped };
  }

  /** The status as the contract shapes it. */
  status(source: string, kind: MeterSourceKind): MeterSourceStatus {
    return {
      source,
      kind,
      attempts: this.attempts,
      failures: this.failures,
      firstError: this.#firstError,
      lastError: this.#lastError,
      readMsMedian: median(this.#readMs),
      seriesCapped: this.#seriesCapped,
      unrecognised: [...this.#unrecognised].sort().slice(0, UNRECOGNISED_SHOWN),
      skipped: this.skipped,
      nonFinite: this.nonFinite,
      invalidLines: this.invalidLines,
    };
  }
}

/** Names a status lists; the contract says at most 50. */
const UNRECOGNISED_SHOWN = 50;
/** Names remembered before sorting: enough that the 50 shown are nearly always the true first 50. */
const UNRECOGNISED_KEPT = 5_000;
