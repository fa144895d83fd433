// `--out csv=…`: k6's CSV output, byte for byte in shape (k6 internal/output/csv).
import { type ConfigProblem, PlateauError } from '../../contract/index.ts';
import { parseDurationNs } from '../config/duration.ts';
import type { Metric, SampleContainer, Tags } from '../metrics/metric.ts';
import { csvTagColumns, DEFAULT_SYSTEM_TAGS } from '../metrics/system-tags.ts';
import { writeAscii, writeFixed6 } from './fixed-decimal.ts';
import type { Output } from './output.ts';
import { ChunkedWriter, type OutputFile, openOutputFile } from './output-file.ts';
import { formatRfc3339 } from './time-format.ts';

/** k6's default `systemTags` that are indexable, sorted: the CSV's tag columns. */
export const DEFAULT_CSV_TAG_COLUMNS: readonly string[] = csvTagColumns(DEFAULT_SYSTEM_TAGS);

export const TIME_FORMATS = [
  'unix',
  'unix_milli',
  'unix_micro',
  'unix_nano',
  'rfc3339',
  'rfc3339_nano',
] as const;
export type TimeFormat = (typeof TIME_FORMATS)[number];

export interface CsvOutputConfig {
  /** `-` writes to stdout; a `.gz` suffix gzips. */
  fileName: string;
  saveIntervalMs: number;
  timeFormat: TimeFormat;
  /** false: no header line (an engine worker's share, joined onto another's); default true. */
  header?: boolean;
}

/**
 * Parses the `--out csv=ARG` argument: a bare file name, or `fileName=…,timeFormat=…,
 * saveInterval=…`, over env (`K6_CSV_FILENAME`, …) over defaults.
 */
export function parseCsvConfig(arg: string, env: Record<string, string | undefined> = {}): CsvOutputConfig {
  const config: CsvOutputConfig = {
    fileName: 'file.csv',
    saveIntervalMs: 1000,
    timeFormat: 'unix',
    header: true,
  };
  const problems: ConfigProblem[] = [];
  const apply = (key: string, value: string, origin: string) => {
    if (key === 'fileName') config.fileName = value;
    else if (key === 'saveInterval') {
      const ns = parseDurationNs(value);
      if (ns === undefined || ns <= 0) {
        problems.push({
          setting: origin,
          message: `"${value}" is not a duration`,
          hint: 'use e.g. 1s or 500ms',
        });
      } else config.saveIntervalMs = ns / 1e6;
    } else if (key === 'timeFormat') {
      if ((TIME_FORMATS as readonly string[]).includes(value)) config.timeFormat = value as TimeFormat;
      else
        problems.push({
          setting: origin,
          message: `"${value}" is not a time format`,
          hint: `use ${TIME_FORMATS.join(', ')}`,
        });
    } else {
      problems.push({
        setting: origin,
        message: `unknown option "${key}"`,
        hint: 'use fileName, saveInterval, timeFormat',
      });
    }
  };
  if (env.K6_CSV_FILENAME) apply('fileName', env.K6_CSV_FILENAME, 'K6_CSV_FILENAME');
  if (env.K6_CSV_SAVE_INTERVAL) apply('saveInterval', env.K6_CSV_SAVE_INTERVAL, 'K6_CSV_SAVE_INTERVAL');
  if (env.K6_CSV_TIME_FORMAT) apply('timeFormat', env.K6_CSV_TIME_FORMAT, 'K6_CSV_TIME_FORMAT');
  if (arg !== '') {
    if (!arg.includes('=')) config.fileName = arg;
    else {
      for (const part of arg.split(',')) {
        const eq = part.indexOf('=');
        if (eq < 0)
          problems.push({
            setting: '--out csv',
            message: `"${part}" is not key=value`,
            hint: 'e.g. fileName=run.csv',
          });
        else apply(part.slice(0, eq), part.slice(eq + 1), `--out csv ${part.slice(0, eq)}`);
      }
    }
  }
  if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'csv output');
  return config;
}

const COMMA = 0x2c;
const LF = 0x0a;
/** Room a row needs besides its name, time and suffix: two commas and the value. */
const ROW_VALUE_BYTES = 2 + 32;

const NEEDS_QUOTES = /[",\r\n]/;
const LEADING_SPACE = /^\s/;

/**
 * Whether a field goes out as it is, in ASCII: nothing csvField() would quote and nothing
 * that UTF-8 would encode in more than one byte.
 */
function isPlainAscii(field: string): boolean {
  if (field.length === 0) return true;
  const first = field.charCodeAt(0);
  if (first === 0x20 || (first >= 0x09 && first <= 0x0d) || field === '\\.') return false;
  for (let i = 0; i < field.length; i++) {
    const c = field.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === COMMA) return false;
  }
  return true;
}

/** Go encoding/csv quoting: quote a field with `,` `"` CR or LF, or starting with a space. */
export function csvField(field: string): string {
  if (field === '') return field;
  // Module constants: a regular expression literal here would be a new object per call.
  if (NEEDS_QUOTES.test(field) || LEADING_SPACE.test(field) || field === '\\.')
    return `"${field.replaceAll('"', '""')}"`;
  return field;
}

function formatTime(timeMs: number, format: TimeFormat): string {
  switch (format) {
    case 'unix':
      return String(Math.floor(timeMs / 1000));
    case 'unix_milli':
      return String(Math.floor(timeMs));
    case 'unix_micro':
      return String(Math.floor(timeMs * 1000));
    case 'unix_nano':
      return (BigInt(Math.floor(timeMs * 1000)) * 1000n).toString();
    case 'rfc3339':
      return formatRfc3339(timeMs, false);
    case 'rfc3339_nano':
      return formatRfc3339(timeMs, true);
  }
}

/**
 * Writes every sample as one CSV row, handing rows to the file every `saveInterval`. The
 * samples of one event share a tags object, so the tag columns are formatted once per
 * event, not once per row.
 */
export class CsvOutput implements Output {
  readonly #config: CsvOutputConfig;
  readonly #columns: readonly string[];
  readonly #columnSet: ReadonlySet<string>;
  #file: OutputFile | undefined;
  #writer: ChunkedWriter | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastTags: Tags | undefined;
  /** What the rows of the current event end with, encoded. */
  #suffix = Buffer.allocUnsafe(256);
  #suffixLength = 0;
  #suffixBytes: Uint8Array = Buffer.alloc(0);
  #suffixHadMetadata = false;
  #lastTime = '';
  #timeBytes: Uint8Array = Buffer.alloc(0);
  readonly #names = new Map<Metric, Uint8Array>();

  constructor(config: CsvOutputConfig, tagColumns: readonly string[] = DEFAULT_CSV_TAG_COLUMNS) {
    this.#config = config;
    this.#columns = [...tagColumns].sort();
    this.#columnSet = new Set(this.#columns);
  }

  description(): string {
    return `csv (${this.#config.fileName})`;
  }

  async start(onFailure?: (failure: PlateauError) => void): Promise<void> {
    this.#file = await openOutputFile(this.#config.fileName, 'CSV', { onFailure });
    this.#writer = new ChunkedWriter(this.#file);
    if (this.#config.header !== false) {
      this.#writer.append(
        `metric_name,timestamp,metric_value,${this.#columns.join(',')},extra_tags,metadata\n`,
      );
      // Out at once: a file cut short any time later still starts with its header.
      this.#writer.flush();
      this.#file.sync();
    }
    this.#timer = setInterval(() => {
      this.#writer?.flush();
      this.#file?.sync();
    }, this.#config.saveIntervalMs);
    this.#timer.unref();
  }

  addMetricSamples(containers: readonly SampleContainer[]): void {
    const writer = this.#writer;
    if (!writer) return;
    const format = this.#config.timeFormat;
    // Rows are encoded straight into the output chunk: the tag columns once per event (its
    // samples share a tags object), the time once per second, names once per metric, each
    // value by hand. Strings per row (and toFixed) were a third of what the engine allocated
    // at 10,000 requests/s, and with them as many young-generation collections.
    for (const container of containers) {
      if (container.tags !== this.#lastTags || container.metadata || this.#suffixHadMetadata) {
        this.#encodeSuffix(container);
      }
      const time = formatTime(container.timeMs, format);
      if (time !== this.#lastTime) {
        this.#lastTime = time;
        this.#timeBytes = Buffer.from(time, 'latin1');
      }
      const timeBytes = this.#timeBytes;
      const suffix = this.#suffixBytes;
      const { metrics, values } = container;
      for (let i = 0; i < metrics.length; i++) {
        const name = this.#nameBytes(metrics[i]!);
        const most = name.length + timeBytes.length + suffix.length + ROW_VALUE_BYTES;
        const value = values[i]!;
        if (!ChunkedWriter.fits(most)) {
          // Tag values longer than a chunk: one string for this row.
          const rest = Buffer.from(suffix).toString('utf8');
          writer.append(`${metrics[i]!.name},${this.#lastTime},${value.toFixed(6)}${rest}`);
          continue;
        }
        // set() copies typed arrays as memory; a loop over ~100 bytes a row cost more.
        const chunk = writer.reserve(most);
        let at = writer.used;
        chunk.set(name, at);
        at += name.length;
        chunk[at++] = COMMA;
        chunk.set(timeBytes, at);
        at += timeBytes.length;
        chunk[at++] = COMMA;
        at = writeFixed6(chunk, at, value);
        chunk.set(suffix, at);
        writer.commit(at + suffix.length);
      }
    }
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#writer?.flush();
    await this.#file?.close();
  }

  /** Encodes `,tag columns…,extra_tags,metadata\n`, which every row of `container` ends with. */
  #encodeSuffix(container: SampleContainer): void {
    const tags = container.tags;
    this.#lastTags = tags;
    this.#suffixLength = 0;
    for (const column of this.#columns) {
      this.#appendByte(COMMA);
      const value = tags[column];
      if (value !== undefined) this.#appendField(value);
    }
    let extra = '';
    for (const key in tags) {
      if (this.#columnSet.has(key)) continue;
      extra += `${extra === '' ? '' : '&'}${key}=${tags[key]}`;
    }
    this.#appendByte(COMMA);
    this.#appendField(extra);
    this.#appendByte(COMMA);
    if (container.metadata) {
      let metadata = '';
      for (const key in container.metadata)
        metadata += `${metadata === '' ? '' : '&'}${key}=${container.metadata[key]}`;
      this.#appendField(metadata);
    }
    this.#appendByte(LF);
    this.#suffixBytes = this.#suffix.subarray(0, this.#suffixLength);
    this.#suffixHadMetadata = container.metadata !== undefined;
  }

  #appendByte(byte: number): void {
    this.#suffixRoom(1);
    this.#suffix[this.#suffixLength++] = byte;
  }

  /** Appends one field, quoted as Go's encoding/csv quotes it (csvField), in UTF-8. */
  #appendField(value: string): void {
    if (isPlainAscii(value)) {
      this.#suffixRoom(value.length);
      this.#suffixLength = writeAscii(this.#suffix, this.#suffixLength, value);
      return;
    }
    const field = csvField(value);
    this.#suffixRoom(Buffer.byteLength(field));
    this.#suffixLength += this.#suffix.write(field, this.#suffixLength);
  }

  /** Grows the suffix buffer, if need be, to take `bytes` more. */
  #suffixRoom(bytes: number): void {
    if (this.#suffixLength + bytes <= this.#suffix.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#suffix.length * 2, this.#suffixLength + bytes));
    this.#suffix.copy(grown, 0, 0, this.#suffixLength);
    this.#suffix = grown;
  }

  /** A metric name's bytes, encoded once. */
  #nameBytes(metric: Metric): Uint8Array {
    let bytes = this.#names.get(metric);
    if (!bytes) {
      bytes = Buffer.from(metric.name);
      this.#names.set(metric, bytes);
    }
    return bytes;
  }
}
