// Streams k6 CSV output (any k6 version, plain or .gz) into ClientSamples.
import { createInterface } from 'node:readline';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { parse as parseSync } from 'csv-parse/sync';
import { ERROR_CODES, PlateauError } from '../contract/index.ts';
import { type ClientSample, extraTag, parseTimestamp, type ReadStats } from './client-sample.ts';

/** Removes NUL bytes (real k6 files can hold blocks of them) and counts them. */
class StripNul extends Transform {
  removed = 0;
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (chunk.indexOf(0) < 0) {
      done(null, chunk);
      return;
    }
    const kept = Buffer.allocUnsafe(chunk.length);
    let n = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === 0) this.removed++;
      else kept[n++] = byte;
    }
    done(null, kept.subarray(0, n));
  }
}

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
 * messages (its path). Tolerates NUL bytes, a truncated last line, RFC 4180 quoting
 * (quoted fields spanning lines included) and unknown metrics; a record that cannot be
 * parsed is skipped and counted. Memory stays flat: nothing is kept per row. With
 * `metrics`, rows of other metrics are counted but not parsed.
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
  const wanted = options.metrics;
  const path = options.name ?? 'the k6 CSV';
  let lastTimestamp = '';
  let lastTimeS = Number.NaN;
  const stats: ReadStats = { rows: 0, skipped: 0, nulBytes: 0 };
  const strip = new StripNul();
  input.on('error', () => undefined); // a gzip cut short ends the lines below
  const lines = createInterface({ input: input.pipe(strip), crlfDelay: Number.POSITIVE_INFINITY });
  let columns: Columns | undefined;
  let pending = '';
  try {
    for await (const raw of lines) {
      // A quoted field may hold a line break: join lines until the quotes balance.
      const line = pending === '' ? raw : `${pending}\n${raw}`;
      if (line.includes('"') && countQuotes(line) % 2 === 1) {
        pending = line;
        continue;
      }
      pending = '';
      if (line === '') continue;
      // Most rows are metrics analysis does not need: skip them before splitting.
      if (columns && wanted && columns.metric === 0 && !wanted.has(line.slice(0, line.indexOf(',')))) {
        stats.rows++;
        continue;
      }
      const record = splitRecord(line);
      if (!record) {
        stats.skipped++;
        continue;
      }
      if (!columns) {
        columns = headerColumns(record, path);
        continue;
      }
      const metric = record[columns.metric];
      const value = Number(record[columns.value]);
      const stamp = record[columns.timestamp] ?? '';
      if (stamp !== lastTimestamp) {
        lastTimestamp = stamp;
        lastTimeS = parseTimestamp(stamp);
      }
      const timeS = lastTimeS;
      if (!metric || !Number.isFinite(value) || !Number.isFinite(timeS)) {
        stats.skipped++;
        continue;
      }
      stats.rows++;
      const at = (k: number | undefined) => {
        const v = k === undefined ? undefined : record[k];
        return v === '' ? undefined : v;
      };
      const extra = at(columns.extraTags);
      onSample({
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
  } catch (error) {
    if (error instanceof PlateauError) throw error;
    // A truncated gzip stream: keep what was read.
    stats.skipped++;
  }
  if (pending !== '') stats.skipped++;
  stats.nulBytes = strip.removed;
  if (!columns && !options.emptyOk) {
    throw new PlateauError(ERROR_CODES.INPUT, `${path} is empty`, {
      hint: 'the run wrote no samples; check that the load reached the target',
    });
  }
  return stats;
}

function countQuotes(text: string): number {
  let n = 0;
  for (let i = text.indexOf('"'); i >= 0; i = text.indexOf('"', i + 1)) n++;
  return n;
}

function headerColumns(header: string[], path: string): Columns {
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
  return {
    metric,
    timestamp,
    value,
    status: index.get('status'),
    errorCode: index.get('error_code'),
    scenario: index.get('scenario'),
    extraTags: index.get('extra_tags'),
    step: index.get('step'),
  };
}
