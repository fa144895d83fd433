// The client side of a run read once: from its client summary when that matches the client
// file, else from the file (or the files of a segmented test), leaving a summary behind.
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { ERROR_CODES, PlateauError } from '../contract/index.ts';
import { readClientFile } from './client-files.ts';
import type { ReadStats } from './client-sample.ts';
import { ClientStepAggregator } from './client-steps.ts';
import { type ClientSummaryKey, readClientSummary, writeClientSummary } from './client-summary.ts';
import { CompleteSeconds } from './run-ending.ts';
import { SummaryShapeError } from './summary-codec.ts';

/** The client side read: an aggregator ready to close, and what reading found. */
export interface ClientPass {
  aggregator: ClientStepAggregator;
  readStats: ReadStats;
  /** The second the run ended in, left out, and its samples. */
  lastSecond: { second: number; samples: number } | undefined;
  /** What the record should say of how the client side was read (a summary rebuilt). */
  notes: string[];
  /** Whether the client summary was used (nothing was read from the client files). */
  fromSummary: boolean;
}

/**
 * Reads the client files into one aggregator. Several files (the instances of a segmented
 * test) merge sample by sample: every aggregate is a count, a histogram, a min/max or a
 * per-second maximum, so the order does not matter. With `lastSecondLeftOut` (a run that
 * ended early wrote only part of its last second) that second is left out.
 *
 * With `summaryFile` (a run directory's, for its one client file) the summary is used when it
 * matches the client file (client-summary.ts), and written after the file is read otherwise;
 * a summary that does not match is said in `notes`. A client file that changed while it was
 * read (something still writes it: a run in progress) is refused with a PlateauError, and no
 * summary is written of it.
 */
export async function readClientPass(options: {
  clientFiles: readonly string[];
  windowSeconds: number;
  lastSecondLeftOut: boolean;
  summaryFile?: string | undefined;
}): Promise<ClientPass> {
  const { clientFiles, windowSeconds, lastSecondLeftOut } = options;
  const summaryFile = clientFiles.length === 1 ? options.summaryFile : undefined;
  const notes: string[] = [];
  let key: ClientSummaryKey | undefined;
  if (summaryFile) {
    key = await keyOf(clientFiles[0]!, windowSeconds, lastSecondLeftOut);
    const found = await readClientSummary(summaryFile, key);
    if (found && 'summary' in found) {
      try {
        const { readStats, lastSecond, pass } = found.summary;
        const aggregator = ClientStepAggregator.fromState(pass);
        return { aggregator, readStats, lastSecond, notes, fromSummary: true };
      } catch (error) {
        if (!(error instanceof SummaryShapeError)) throw error;
        notes.push(rebuilt(summaryFile, key, `its contents are damaged (${error.message})`));
      }
    } else if (found) notes.push(rebuilt(summaryFile, key, found.stale));
  }
  const aggregator = new ClientStepAggregator({ windowSeconds });
  const complete = lastSecondLeftOut ? new CompleteSeconds((s) => aggregator.add(s)) : undefined;
  const readStats: ReadStats = { rows: 0, skipped: 0, nulBytes: 0 };
  for (const file of clientFiles) {
    const stats = await readClientFile(file, complete ? (s) => complete.add(s) : (s) => aggregator.add(s), {
      emptyOk: lastSecondLeftOut,
    });
    readStats.rows += stats.rows;
    readStats.skipped += stats.skipped;
    readStats.nulBytes += stats.nulBytes;
    if (stats.cut !== undefined) readStats.cut ??= `${basename(file)}: ${stats.cut}`;
  }
  const lastSecond = complete?.close();
  if (summaryFile && key) {
    const after = await keyOf(clientFiles[0]!, windowSeconds, lastSecondLeftOut);
    if (after.sizeBytes !== key.sizeBytes || after.mtimeMs !== key.mtimeMs) {
      throw new PlateauError(
        ERROR_CODES.INPUT,
        `${clientFiles[0]} changed while it was read (${key.sizeBytes.toLocaleString('en-US')} bytes, then ${after.sizeBytes.toLocaleString('en-US')}): something is still writing it, so the run is still in progress`,
        { hint: 'analyse the run when its load generator has stopped writing' },
      );
    }
    await writeClientSummary(summaryFile, key, { readStats, lastSecond, pass: aggregator.state() });
  }
  return { aggregator, readStats, lastSecond, notes, fromSummary: false };
}

async function keyOf(
  file: string,
  windowSeconds: number,
  lastSecondLeftOut: boolean,
): Promise<ClientSummaryKey> {
  const info = await stat(file);
  return {
    file: basename(file),
    sizeBytes: info.size,
    mtimeMs: info.mtimeMs,
    windowSeconds,
    lastSecondLeftOut,
  };
}

function rebuilt(summaryFile: string, key: ClientSummaryKey, why: string): string {
  return `${basename(summaryFile)} was not used, as ${why}: the client side was read again from ${key.file} and the summary rebuilt`;
}
