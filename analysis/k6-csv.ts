// Streams k6 CSV output (any k6 version, plain or .gz) into ClientSamples.
import { createReadStream } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
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

/**
 * Reads a k6 CSV file by header name (15 to 19 columns, whatever `--system-tags` did),
 * calling `onSample` per row. Tolerates NUL bytes, a truncated last line, RFC 4180 quoting
 * and unknown metrics; a record that cannot be parsed is skipped and counted. Memory stays
 * flat: nothing is kept per row.
 */
export async function readK6Csv(path: string, onSample: (sample: ClientSample) => void): Promise<ReadStats> {
  const stats: ReadStats = { rows: 0, skipped: 0, nulBytes: 0 };
  const strip = new StripNul();
  let index: Record<string, number> | undefined;
  const parser = parse({
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_skip: () => {
      stats.skipped++;
    },
  });
  const handle = new Transform({
    objectMode: true,
    transform(record: string[], _encoding, done) {
      if (!index) {
        index = Object.fromEntries(record.map((name, i) => [name, i]));
        if (
          index.metric_name === undefined ||
          index.timestamp === undefined ||
          index.metric_value === undefined
        ) {
          return done(
            new PlateauError(
              ERROR_CODES.INPUT,
              `${path} is not k6 CSV output: its header is "${record.join(',').slice(0, 120)}"`,
              {
                hint: 'pass the file k6 wrote with --out csv=FILE (its header starts metric_name,timestamp,metric_value)',
              },
            ),
          );
        }
        return done();
      }
      const i = index;
      const metric = record[i.metric_name!];
      const value = Number(record[i.metric_value!]);
      const timeS = parseTimestamp(record[i.timestamp!] ?? '');
      if (!metric || !Number.isFinite(value) || !Number.isFinite(timeS)) {
        stats.skipped++;
        return done();
      }
      stats.rows++;
      const at = (name: string) => {
        const k = i[name];
        const v = k === undefined ? undefined : record[k];
        return v === '' ? undefined : v;
      };
      const extra = at('extra_tags') ?? '';
      onSample({
        metric,
        timeS,
        value,
        status: at('status'),
        errorCode: at('error_code'),
        scenario: at('scenario'),
        step: extraTag(extra, 'step') ?? at('step'),
      });
      done();
    },
  });
  const source = createReadStream(path);
  const stages = path.endsWith('.gz')
    ? [source, createGunzip(), strip, parser, handle]
    : [source, strip, parser, handle];
  try {
    await pipeline(stages as unknown as [NodeJS.ReadableStream, ...NodeJS.WritableStream[]]);
  } catch (error) {
    if (error instanceof PlateauError) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') {
      throw new PlateauError(ERROR_CODES.INPUT, `cannot read ${path}: ${(error as Error).message}`, {
        hint: 'check the path; analysis reads the CSV k6 (or plateau) wrote with --out csv=FILE',
        cause: error,
      });
    }
    if (code === 'Z_BUF_ERROR' || code === 'Z_DATA_ERROR') {
      // A gzip file cut short (an interrupted run): keep what was read.
      stats.skipped++;
    } else {
      throw new PlateauError(ERROR_CODES.INPUT, `cannot parse ${path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  stats.nulBytes = strip.removed;
  if (!index) {
    throw new PlateauError(ERROR_CODES.INPUT, `${path} is empty`, {
      hint: 'the run wrote no samples; check that the load reached the target',
    });
  }
  return stats;
}
