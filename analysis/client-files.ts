// The client side's files: which k6 output a run directory holds, and reading it (CSV or
// NDJSON, plain or gzip) sample by sample; k6's summary export for its request count.
import { createReadStream } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip, type ZlibOptions } from 'node:zlib';
import { ERROR_CODES, PlateauError } from '../contract/index.ts';
import type { ClientSample, ReadStats } from './client-sample.ts';
import { CLIENT_METRICS } from './client-steps.ts';
import { readK6Csv } from './k6-csv.ts';
import { readK6Ndjson } from './k6-ndjson.ts';
import { WholeLines } from './whole-lines.ts';

/** Bytes per read of a client file (Node's default). */
const READ_BYTES = 1 << 16;
/**
 * Bytes of text per piece gunzip hands on: twice zlib's default (16 KiB), for half the round
 * trips. Larger pieces were a little faster but held more memory: each piece is a new buffer,
 * freed only when V8 next collects, and pieces of 256 KiB kept 15 MB more of them alive.
 */
const INFLATE_BYTES = 1 << 15;
/**
 * Text gunzip may inflate ahead of the reader: zlib inflates on libuv's thread pool, so while
 * the reader parses one piece the next ones are being inflated on the other core, instead of
 * inflating and parsing taking turns on one.
 */
const INFLATE_AHEAD_BYTES = 1 << 18;
const INFLATE_AHEAD_PIECES = INFLATE_AHEAD_BYTES / INFLATE_BYTES;

/** Client files a run directory may hold, in order of preference. */
export const CLIENT_FILES = ['k6.csv.gz', 'k6.csv', 'k6.ndjson.gz', 'k6.ndjson', 'k6.json.gz', 'k6.json'];

/** Finds the client file of a run directory. */
export async function findClientFile(dir: string): Promise<string> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `cannot read the run directory ${dir}: ${(error as Error).message}`,
      {
        hint: 'pass a run directory (runs/<id>/) or a k6 CSV/NDJSON file',
        cause: error,
      },
    );
  }
  const found = CLIENT_FILES.find((name) => entries.includes(name));
  if (!found) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `${dir} holds no k6 output (looked for ${CLIENT_FILES.join(', ')})`,
      {
        hint: 'the run may have failed before the load started; see run.json and the logs in that directory',
      },
    );
  }
  return join(dir, found);
}

/**
 * Opens a file as text, through gunzip when it ends in `.gz`: the one place analysis opens
 * a client file, so the readers below take streams. A file that cannot be opened is named.
 * A gzip file cut short (its writer was killed before closing it) is read to its last
 * whole line, and `onCut` is told why it ended; that is not an error. A reader that takes the
 * text by async iteration (not piped into a synchronous consumer) lets gunzip run ahead of it.
 */
export async function openText(path: string, onCut?: (why: string) => void): Promise<Readable> {
  const source = createReadStream(path, { highWaterMark: READ_BYTES });
  await new Promise<void>((resolve, reject) => {
    source.once('open', () => resolve());
    source.once('error', (error) =>
      reject(
        new PlateauError(ERROR_CODES.INPUT, `cannot read ${path}: ${error.message}`, {
          hint: 'check the path; analysis reads what k6 (or plateau) wrote with --out csv=FILE or --out json=FILE',
          cause: error,
        }),
      ),
    );
  });
  if (!path.endsWith('.gz')) return source;
  // zlib passes stream options on to its Transform; its types name only zlib's own.
  const gunzip = createGunzip({
    chunkSize: INFLATE_BYTES,
    readableHighWaterMark: INFLATE_AHEAD_BYTES,
  } as ZlibOptions);
  // Pieces handed on one by one (object mode), not joined into one buffer on each read.
  const lines = new WholeLines({ readableObjectMode: true, readableHighWaterMark: INFLATE_AHEAD_PIECES });
  // A stream that ends mid-member errors here; nothing downstream would ever end otherwise.
  gunzip.once('error', (error) => {
    onCut?.(error.message);
    lines.cutOff();
  });
  source.once('error', (error) => {
    onCut?.(error.message);
    lines.cutOff();
  });
  source.pipe(gunzip).pipe(lines);
  return lines;
}

/**
 * Reads any k6 output file (CSV or NDJSON, plain or .gz) into the aggregator. With `emptyOk`
 * (a run that ended early) a file without a single line is no samples rather than an error.
 */
export async function readClientFile(
  path: string,
  onSample: (s: ClientSample) => void,
  options: { emptyOk?: boolean } = {},
): Promise<ReadStats> {
  const name = basename(path).replace(/\.gz$/, '');
  let cut: string | undefined;
  const onCut = (why: string) => {
    cut ??= why;
  };
  let stats: ReadStats;
  if (name.endsWith('.csv'))
    stats = await readK6Csv(await openText(path, onCut), onSample, {
      metrics: CLIENT_METRICS,
      name: path,
      emptyOk: options.emptyOk === true,
    });
  else if (name.endsWith('.json') || name.endsWith('.ndjson'))
    stats = await readK6Ndjson(await openText(path, onCut), onSample);
  else
    throw new PlateauError(ERROR_CODES.INPUT, `${path} is neither k6 CSV nor NDJSON output`, {
      hint: 'pass a file written with --out csv=FILE or --out json=FILE (.csv, .ndjson or .json, optionally .gz)',
    });
  return cut === undefined ? stats : { ...stats, cut };
}

/** `metrics.http_reqs.count` of a k6 summary export (legacy or handleSummary shape), if readable. */
export async function summaryRequestCount(path: string): Promise<number | undefined> {
  try {
    const summary = JSON.parse(await readFile(path, 'utf8')) as {
      metrics?: Record<string, { count?: number; values?: { count?: number } }>;
    };
    const reqs = summary.metrics?.http_reqs;
    const count = reqs?.count ?? reqs?.values?.count;
    return typeof count === 'number' ? count : undefined;
  } catch {
    return undefined;
  }
}
