// Streams k6 CSV output (any k6 version, plain or .gz) into ClientSamples, reading bytes.
import type { Readable } from 'node:stream';
import { parse as parseSync } from 'csv-parse/sync';
import { ERROR_CODES, PlateauError } from '../contract/index.ts';
import { type ClientSample, extraTag, parseTimestamp, type ReadStats } from './client-sample.ts';

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
/** Past 2^53 an integer built digit by digit is no longer exact. */
const EXACT_INTEGER = 2 ** 53;
/** 10^0 … 10^22, each exact in a double. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** Column positions of the fields analysis reads, from the header. */
interface Columns {
  metric: number;
  timestamp: number;
  value: number;
  status: number | undefined;
  errorCode: number | undefined;
  scenario: number | undefined;
  extraTags: number | undefined;
  step: number | undefined;
}

/**
 * Splits one CSV record. Go's encoding/csv quotes only fields that need it, so nearly every
 * k6 row is a plain comma split; a row with a quote goes through csv-parse (RFC 4180).
 * Returns undefined for a malformed record.
 */
function splitRecord(line: string): string[] | undefined {
  if (!line.includes('"')) return line.split(',');
  try {
    const [record] = parseSync(line, { relax_column_count: true }) as string[][];
    return record;
  } catch {
    return undefined;
  }
}

/**
 * Reads k6 CSV text (already decompressed) by header name (15 to 19 columns, whatever
 * `--system-tags` did), calling `onSample` per row. `options.name` names the input in
 * messages (its path). Tolerates NUL bytes, a truncated last line, CR or CRLF line ends,
 * RFC 4180 quoting (quoted fields spanning lines included) and unknown metrics; a record that
 * cannot be parsed is skipped and counted. Memory stays flat: nothing is kept per row. With
 * `metrics`, rows of other metrics are counted but not parsed.
 *
 * Most rows are of metrics analysis does not read (7 of the 9 an HTTP request writes, and
 * every iteration row): those are recognised from their first bytes and never become strings.
 * The rows it reads are cut at their commas in the bytes, and a field that repeats the previous
 * row's (a stamp, a status, a scenario, the tags) reuses what that row decoded. A line holding
 * a quote, or read inside a quoted field, goes the slower way through csv-parse.
 */
export async function readK6Csv(
  input: Readable,
  onSample: (sample: ClientSample) => void,
  options: {
    metrics?: ReadonlySet<string>;
    name?: string;
    /** Text without even a header is no samples, not an error (a run that ended before its generator wrote any). */
    emptyOk?: boolean;
  } = {},
): Promise<ReadStats> {
  const reader = new K6CsvReader(onSample, options.metrics, options.name ?? 'the k6 CSV');
  input.on('error', () => undefined); // a gzip cut short ends the stream below
  try {
    for await (const chunk of input) reader.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    reader.end();
  } catch (error) {
    if (error instanceof PlateauError) throw error;
    // A stream that failed mid-way (a file that could not be read to its end): keep what was read.
    reader.stats.skipped++;
  }
  reader.close();
  if (!reader.hasHeader && !options.emptyOk) {
    throw new PlateauError(ERROR_CODES.INPUT, `${reader.path} is empty`, {
      hint: 'the run wrote no samples; check that the load reached the target',
    });
  }
  return reader.stats;
}

/** One metric name analysis reads, as the bytes a row starts with. */
interface WantedName {
  name: string;
  bytes: Buffer;
}

/** The text of one field, decoded again only when its bytes differ from the previous row's. */
class FieldText {
  readonly #bytes = Buffer.alloc(96);
  #length = -1;
  text = '';

  read(buf: Buffer, start: number, end: number): string {
    const n = end - start;
    if (n === this.#length) {
      let i = 0;
      while (i < n && buf[start + i] === this.#bytes[i]) i++;
      if (i === n) return this.text;
    }
    this.text = buf.toString('utf8', start, end);
    if (n <= this.#bytes.length) {
      buf.copy(this.#bytes, 0, start, end);
      this.#length = n;
    } else this.#length = -1;
    return this.text;
  }
}

/**
 * The reader's state across chunks: the part line a chunk ended with, a quoted field still
 * open, the header's columns, and the counts. `write` takes text in any chunking, `end` reads
 * a last line without its line break, `close` counts a quoted field left open.
 */
class K6CsvReader {
  readonly stats: ReadStats = { rows: 0, skipped: 0, nulBytes: 0 };
  readonly path: string;
  readonly #onSample: (sample: ClientSample) => void;
  /** Wanted names by their first byte; undefined: every metric is read. */
  readonly #wanted: WantedName[][] | undefined;
  #columns: (Columns & { last: number }) | undefined;
  /** A record whose quoted field holds line breaks, joined until its quotes balance. */
  #pending = '';
  /** The end of the previous chunk after its last line break. */
  #carry: Buffer | undefined;
  /** The row being read: its buffer, bounds, comma positions and fields found (up to the last column read). */
  #commas = new Int32Array(0);
  #row: Buffer = Buffer.alloc(0);
  #rowStart = 0;
  #rowEnd = 0;
  #fields = 0;
  /** The field #span found. */
  #from = 0;
  #to = 0;
  // What the previous rows decoded, reused while the bytes repeat.
  readonly #metric = new FieldText();
  readonly #stamp = new FieldText();
  #stampText: string | undefined;
  #stampS = Number.NaN;
  readonly #status = new FieldText();
  readonly #errorCode = new FieldText();
  readonly #scenario = new FieldText();
  readonly #stepColumn = new FieldText();
  readonly #extra = new FieldText();
  #extraText: string | undefined;
  #extraStep: string | undefined;
  #extraAttempt: string | undefined;

  constructor(
    onSample: (sample: ClientSample) => void,
    metrics: ReadonlySet<string> | undefined,
    path: string,
  ) {
    this.#onSample = onSample;
    this.path = path;
    if (metrics) {
      const byFirstByte: WantedName[][] = Array.from({ length: 256 }, () => []);
      for (const name of metrics) {
        const bytes = Buffer.from(name);
        if (bytes.length > 0) byFirstByte[bytes[0]!]!.push({ name, bytes });
      }
      this.#wanted = byFirstByte;
    }
  }

  get hasHeader(): boolean {
    return this.#columns !== undefined;
  }

  write(input: Buffer): void {
    let chunk = this.#withoutNul(input);
    if (this.#carry) {
      const newline = chunk.indexOf(LF);
      if (newline < 0) {
        this.#carry = Buffer.concat([this.#carry, chunk]);
        return;
      }
      const joined = Buffer.concat([this.#carry, chunk.subarray(0, newline + 1)]);
      this.#carry = undefined;
      this.#lines(joined);
      chunk = chunk.subarray(newline + 1);
    }
    const rest = this.#lines(chunk);
    // A copy: the chunk's buffer is not kept alive for the few bytes of its part line.
    if (rest < chunk.length) this.#carry = Buffer.from(chunk.subarray(rest));
  }

  /** The input ended: its last line, if it had no line break, is a line too. */
  end(): void {
    const last = this.#carry;
    this.#carry = undefined;
    if (last && last.length > 0) this.#line(last, 0, last.length, last.indexOf(QUOTE) >= 0, last.indexOf(CR));
  }

  /** No more lines: a quoted field still open is a record cut short. */
  close(): void {
    if (this.#pending !== '') this.stats.skipped++;
    this.#pending = '';
  }

  /** Real k6 files can hold blocks of NUL bytes: they are removed and counted. */
  #withoutNul(chunk: Buffer): Buffer {
    if (chunk.indexOf(0) < 0) return chunk;
    const kept = Buffer.allocUnsafe(chunk.length);
    let n = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === 0) this.stats.nulBytes++;
      else kept[n++] = byte;
    }
    return kept.subarray(0, n);
  }

  /** Reads every line `buf` ends with a line break; returns where the part line after them starts. */
  #lines(buf: Buffer): number {
    let start = 0;
    let quote = buf.indexOf(QUOTE);
    let cr = buf.indexOf(CR);
    for (;;) {
      const end = buf.indexOf(LF, start);
      if (end < 0) return start;
      if (quote >= 0 && quote < start) quote = buf.indexOf(QUOTE, start);
      if (cr >= 0 && cr < start) cr = buf.indexOf(CR, start);
      this.#line(buf, start, end, quote >= 0 && quote < end, cr >= 0 && cr < end ? cr : -1);
      start = end + 1;
    }
  }

  /**
   * One line of `buf`, [start, end) without its LF; `cr` is the first CR in it, or −1. Line
   * breaks are readline's: LF, CRLF, or a CR alone.
   */
  #line(buf: Buffer, start: number, end: number, quoted: boolean, cr: number): void {
    if (cr >= 0) {
      if (cr !== end - 1) {
        // CRs inside the line: each ends a line of its own.
        for (const part of buf.toString('utf8', start, buf[end - 1] === CR ? end - 1 : end).split('\r'))
          this.#record(part);
        return;
      }
      end--; // CRLF
    }
    if (quoted || this.#pending !== '' || !this.#columns || !this.#fast(buf, start, end))
      this.#record(buf.toString('utf8', start, end));
  }

  /**
   * A line with no quote, outside a quoted field, after the header: read from its bytes.
   * Returns false when it must be read as text after all (a line without a comma).
   */
  #fast(buf: Buffer, start: number, end: number): boolean {
    if (start === end) return true; // an empty line
    const columns = this.#columns!;
    let metric: string | undefined;
    if (this.#wanted && columns.metric === 0) {
      const wanted = this.#wanted[buf[start]!]!;
      for (const candidate of wanted) {
        const n = candidate.bytes.length;
        // A line without a comma is cut one character short (as text), which could make a name.
        if (end - start === n + 1 && buf[start + n] !== COMMA) return false;
        if (buf[start + n] === COMMA && sameBytes(buf, start, candidate.bytes)) {
          metric = candidate.name;
          break;
        }
      }
      if (metric === undefined) {
        // Most rows: a metric analysis does not read, counted unparsed.
        this.stats.rows++;
        return true;
      }
    }
    // Cut the row at its commas, up to the last column analysis reads.
    const commas = this.#commas;
    const last = columns.last;
    let fields = 1;
    for (let i = start; i < end && fields <= last; i++) if (buf[i] === COMMA) commas[fields++ - 1] = i;
    this.#row = buf;
    this.#rowStart = start;
    this.#rowEnd = end;
    this.#fields = fields;
    if (metric === undefined && this.#span(columns.metric))
      metric = this.#metric.read(buf, this.#from, this.#to);
    const value = this.#span(columns.value) ? parseNumber(buf, this.#from, this.#to) : Number.NaN;
    let timeS: number;
    if (this.#span(columns.timestamp)) {
      const stamp = this.#stamp.read(buf, this.#from, this.#to);
      if (stamp !== this.#stampText) {
        this.#stampText = stamp;
        this.#stampS = parseTimestamp(stamp);
      }
      timeS = this.#stampS;
    } else timeS = parseTimestamp('');
    if (!metric || !Number.isFinite(value) || !Number.isFinite(timeS)) {
      this.stats.skipped++;
      return true;
    }
    this.stats.rows++;
    const extra = this.#text(this.#extra, columns.extraTags);
    if (extra !== this.#extraText) {
      this.#extraText = extra;
      this.#extraStep = extra === undefined ? undefined : extraTag(extra, 'step');
      this.#extraAttempt = extra === undefined ? undefined : extraTag(extra, 'attempt');
    }
    this.#onSample({
      metric,
      timeS,
      value,
      status: this.#text(this.#status, columns.status),
      errorCode: this.#text(this.#errorCode, columns.errorCode),
      scenario: this.#text(this.#scenario, columns.scenario),
      step: this.#extraStep ?? this.#text(this.#stepColumn, columns.step),
      attempt: this.#extraAttempt,
    });
    return true;
  }

  /** Sets #from and #to to field `k` of the row being read; false when the row has no such field. */
  #span(k: number | undefined): boolean {
    if (k === undefined || k >= this.#fields) return false;
    this.#from = k === 0 ? this.#rowStart : this.#commas[k - 1]! + 1;
    // The last field cut is followed by the rest of the row: it ends at its own comma, if any.
    this.#to = k < this.#fields - 1 ? this.#commas[k]! : fieldEnd(this.#row, this.#from, this.#rowEnd);
    return true;
  }

  /** Field `k` of the row being read as text, undefined when it is empty or absent (as k6 leaves a tag unset). */
  #text(field: FieldText, k: number | undefined): string | undefined {
    if (!this.#span(k) || this.#from === this.#to) return undefined;
    return field.read(this.#row, this.#from, this.#to);
  }

  /** One line as text: the header, a quoted record, or any line the bytes could not be read as. */
  #record(raw: string): void {
    const stats = this.stats;
    // A quoted field may hold a line break: join lines until the quotes balance.
    const line = this.#pending === '' ? raw : `${this.#pending}\n${raw}`;
    if (line.includes('"') && countQuotes(line) % 2 === 1) {
      this.#pending = line;
      return;
    }
    this.#pending = '';
    if (line === '') return;
    const columns = this.#columns;
    // Most rows are metrics analysis does not need: skip them before splitting.
    if (columns && this.#wanted && columns.metric === 0) {
      const name = line.slice(0, line.indexOf(','));
      if (!this.#wanted[name.charCodeAt(0)]?.some((w) => w.name === name)) {
        stats.rows++;
        return;
      }
    }
    const record = splitRecord(line);
    if (!record) {
      stats.skipped++;
      return;
    }
    if (!columns) {
      this.#columns = headerColumns(record, this.path);
      this.#commas = new Int32Array(this.#columns.last + 1);
      return;
    }
    const metric = record[columns.metric];
    const value = Number(record[columns.value]);
    const timeS = parseTimestamp(record[columns.timestamp] ?? '');
    if (!metric || !Number.isFinite(value) || !Number.isFinite(timeS)) {
      stats.skipped++;
      return;
    }
    stats.rows++;
    const at = (k: number | undefined) => {
      const v = k === undefined ? undefined : record[k];
      return v === '' ? undefined : v;
    };
    const extra = at(columns.extraTags);
    this.#onSample({
      metric,
      timeS,
      value,
      status: at(columns.status),
      errorCode: at(columns.errorCode),
      scenario: at(columns.scenario),
      step: (extra === undefined ? undefined : extraTag(extra, 'step')) ?? at(columns.step),
      attempt: extra === undefined ? undefined : extraTag(extra, 'attempt'),
    });
  }
}

/** Whether `buf` holds `bytes` at `start`. */
function sameBytes(buf: Buffer, start: number, bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) if (buf[start + i] !== bytes[i]) return false;
  return true;
}

/** The end of the field starting at `start`: the next comma before `end`, or `end`. */
function fieldEnd(buf: Buffer, start: number, end: number): number {
  for (let i = start; i < end; i++) if (buf[i] === COMMA) return i;
  return end;
}

/**
 * `Number(text)` of the bytes [start, end). k6 writes values as Go's `%f` (`221.899000`):
 * digits, a point, digits. Those are read as an integer over a power of ten, which is exact
 * (both are exact doubles and IEEE division rounds correctly, as the decimal parse does);
 * anything else (an exponent, spaces, an empty field, too many digits) goes through Number.
 */
function parseNumber(buf: Buffer, start: number, end: number): number {
  let i = start;
  const negative = buf[i] === MINUS;
  if (negative) i++;
  let integer = 0;
  let digits = 0;
  let decimals = -1;
  for (; i < end; i++) {
    const byte = buf[i]!;
    if (byte >= ZERO && byte <= NINE) {
      integer = integer * 10 + (byte - ZERO);
      digits++;
      if (decimals >= 0) decimals++;
    } else if (byte === DOT && decimals < 0) decimals = 0;
    else return Number(buf.toString('utf8', start, end));
  }
  if (digits === 0 || integer >= EXACT_INTEGER || decimals > 22)
    return Number(buf.toString('utf8', start, end));
  const value = decimals > 0 ? integer / POWERS_OF_TEN[decimals]! : integer;
  return negative ? -value : value;
}

function countQuotes(text: string): number {
  let n = 0;
  for (let i = text.indexOf('"'); i >= 0; i = text.indexOf('"', i + 1)) n++;
  return n;
}

function headerColumns(header: string[], path: string): Columns & { last: number } {
  const index = new Map(header.map((name, i) => [name, i]));
  const metric = index.get('metric_name');
  const timestamp = index.get('timestamp');
  const value = index.get('metric_value');
  if (metric === undefined || timestamp === undefined || value === undefined) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `${path} is not k6 CSV output: its header is "${header.join(',').slice(0, 120)}"`,
      {
        hint: 'pass the file k6 wrote with --out csv=FILE (its header starts metric_name,timestamp,metric_value)',
      },
    );
  }
  const columns = {
    metric,
    timestamp,
    value,
    status: index.get('status'),
    errorCode: index.get('error_code'),
    scenario: index.get('scenario'),
    extraTags: index.get('extra_tags'),
    step: index.get('step'),
  };
  // The last column a row is cut up to: the fields after it are never read.
  const last = Math.max(...Object.values(columns).filter((k): k is number => k !== undefined));
  return { ...columns, last };
}
