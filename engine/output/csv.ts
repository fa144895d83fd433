// `--out csv=…`: k6's CSV output, byte for byte in shape (k6 internal/output/csv).
import { type ConfigProblem, PlateauError } from '../../contract/index.ts';
import { parseDurationNs } from '../config/duration.ts';
import type { SampleContainer, Tags } from '../metrics/metric.ts';
import { csvTagColumns, DEFAULT_SYSTEM_TAGS } from '../metrics/system-tags.ts';
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
}

/**
 * Parses the `--out csv=ARG` argument: a bare file name, or `fileName=…,timeFormat=…,
 * saveInterval=…`, over env (`K6_CSV_FILENAME`, …) over defaults.
 */
export function parseCsvConfig(arg: string, env: Record<string, string | undefined> = {}): CsvOutputConfig {
  const config: CsvOutputConfig = { fileName: 'file.csv', saveIntervalMs: 1000, timeFormat: 'unix' };
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

/** Characters of rows gathered before they are encoded into the output chunk. */
const ROW_TEXT_CHARS = 16 * 1024;

const NEEDS_QUOTES = /[",\r\n]/;
const LEADING_SPACE = /^\s/;

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
  #lastTagPart = '';

  constructor(config: CsvOutputConfig, tagColumns: readonly string[] = DEFAULT_CSV_TAG_COLUMNS) {
    this.#config = config;
    this.#columns = [...tagColumns].sort();
    this.#columnSet = new Set(this.#columns);
  }

  description(): string {
    return `csv (${this.#config.fileName})`;
  }

  async start(): Promise<void> {
    this.#file = await openOutputFile(this.#config.fileName, 'CSV');
    this.#writer = new ChunkedWriter(this.#file);
    this.#writer.append(
      `metric_name,timestamp,metric_value,${this.#columns.join(',')},extra_tags,metadata\n`,
    );
    this.#timer = setInterval(() => this.#writer?.flush(), this.#config.saveIntervalMs);
    this.#timer.unref();
  }

  addMetricSamples(containers: readonly SampleContainer[]): void {
    const writer = this.#writer;
    if (!writer) return;
    const format = this.#config.timeFormat;
    // Rows are gathered into short strings: one huge join per batch would land in V8's
    // large-object space (old generation) and bring on full collections.
    let text = '';
    for (const container of containers) {
      if (container.tags !== this.#lastTags) {
        this.#lastTags = container.tags;
        this.#lastTagPart = this.#tagPart(container.tags);
      }
      let metadata = '';
      if (container.metadata) {
        for (const key in container.metadata)
          metadata += `${metadata === '' ? '' : '&'}${key}=${container.metadata[key]}`;
        metadata = csvField(metadata);
      }
      const time = formatTime(container.timeMs, format);
      const suffix = `${this.#lastTagPart},${metadata}\n`;
      const { metrics, values } = container;
      for (let i = 0; i < metrics.length; i++) {
        text += `${metrics[i]!.name},${time},${values[i]!.toFixed(6)}${suffix}`;
      }
      if (text.length >= ROW_TEXT_CHARS) {
        writer.append(text);
        text = '';
      }
    }
    if (text !== '') writer.append(text);
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#writer?.flush();
    await this.#file?.close();
  }

  /** `,col,col,…,extra_tags` for one tags object. */
  #tagPart(tags: Tags): string {
    let part = '';
    for (const column of this.#columns) {
      const value = tags[column];
      part += value === undefined ? ',' : `,${csvField(value)}`;
    }
    let extra = '';
    for (const key in tags) {
      if (this.#columnSet.has(key)) continue;
      extra += `${extra === '' ? '' : '&'}${key}=${tags[key]}`;
    }
    return `${part},${csvField(extra)}`;
  }
}
