// client-summary.json.gz: a run's client side read once, kept beside its client file, so that
// analysing the run again (analyze, report, compare, confirm) does not read the file again.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { SCHEMA_VERSIONS } from '../contract/index.ts';
import { writeFileAtomic } from '../lib/atomic-write.ts';
import { PLATEAU_VERSION } from '../lib/version.ts';
import type { ReadStats } from './client-sample.ts';
import type { ClientPassState } from './client-steps.ts';

/** The summary's name in a run directory. */
export const CLIENT_SUMMARY_FILE = 'client-summary.json.gz';

const KIND = 'plateau.client-summary';
const SCHEMA_VERSION = SCHEMA_VERSIONS[KIND];

/**
 * What a summary was made from: the client file as it was when it was read, and how it was
 * read. A summary is used only when every field matches.
 */
export interface ClientSummaryKey {
  /** The client file's name in the run directory (`k6.csv.gz`, `k6.csv`, `k6.ndjson`…). */
  file: string;
  sizeBytes: number;
  /** Its modification time, ms since the epoch, with the file system's fraction of a ms. */
  mtimeMs: number;
  /** The time windows of requests without a step tag, s (run.json's hold). */
  windowSeconds: number;
  /** Whether the second the run ended in was left out (a run that did not complete). */
  lastSecondLeftOut: boolean;
}

/** What reading the client file left: the counts of the read and the aggregator's state. */
export interface ClientSummary {
  readStats: ReadStats;
  /** The second left out at the end, and its samples (CompleteSeconds.close()). */
  lastSecond: { second: number; samples: number } | undefined;
  pass: ClientPassState;
}

/**
 * The summary's first line. The second line is the pass (ClientPassState) as JSON, whose
 * SHA-256 is here: a summary edited or damaged after it was written is told apart.
 */
interface SummaryHeader {
  kind: typeof KIND;
  schemaVersion: number;
  plateauVersion: string;
  key: ClientSummaryKey;
  readStats: ReadStats;
  lastSecond: { second: number; samples: number } | null;
  passSha256: string;
}

/**
 * Reads the summary at `path` for a client file that now has `key`. Undefined when there is
 * none; `{ stale }` with why, in words, when there is one that must not be used: unreadable
 * (cut short, not gzip, not JSON), of another kind, written by another plateau or schema,
 * made from the file as it was before (another size or modification time: edited, truncated,
 * still growing) or read another way, or edited itself. The pass is returned as parsed JSON:
 * ClientStepAggregator.fromState checks its shape.
 */
export async function readClientSummary(
  path: string,
  key: ClientSummaryKey,
): Promise<{ summary: ClientSummary } | { stale: string } | undefined> {
  let text: string;
  try {
    text = (await promisify(gunzip)(await readFile(path))).toString('utf8');
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
    return { stale: `it could not be read (${(error as Error).message})` };
  }
  const newline = text.indexOf('\n');
  let header: SummaryHeader;
  try {
    header = JSON.parse(newline < 0 ? text : text.slice(0, newline));
  } catch (error) {
    return { stale: `it is not JSON (${(error as Error).message})` };
  }
  if (header?.kind !== KIND)
    return { stale: `it is not a client summary (kind ${JSON.stringify(header?.kind)})` };
  if (header.schemaVersion !== SCHEMA_VERSION || header.plateauVersion !== PLATEAU_VERSION) {
    return {
      stale: `it was written by another version (plateau ${header.plateauVersion}, summary schema ${header.schemaVersion}; this is plateau ${PLATEAU_VERSION}, schema ${SCHEMA_VERSION})`,
    };
  }
  const was = header.key;
  if (was?.file !== key.file || was.sizeBytes !== key.sizeBytes || was.mtimeMs !== key.mtimeMs) {
    return {
      stale: `it was made from ${fileWords(was)}; the client file is now ${fileWords(key)}`,
    };
  }
  if (was.windowSeconds !== key.windowSeconds || was.lastSecondLeftOut !== key.lastSecondLeftOut) {
    return {
      stale: `it was read with ${was.windowSeconds}-second windows${was.lastSecondLeftOut ? ', its last second left out' : ''}, and this analysis reads with ${key.windowSeconds}-second windows${key.lastSecondLeftOut ? ', its last second left out' : ''}`,
    };
  }
  const passText = newline < 0 ? '' : text.slice(newline + 1).trimEnd();
  if (sha256(passText) !== header.passSha256)
    return { stale: 'its contents were changed after it was written' };
  let pass: ClientPassState;
  try {
    pass = JSON.parse(passText);
  } catch (error) {
    return { stale: `its contents are not JSON (${(error as Error).message})` };
  }
  return { summary: { readStats: header.readStats, lastSecond: header.lastSecond ?? undefined, pass } };
}

/**
 * Writes the summary of a client file read with `key` to `path` (atomically: a reader never
 * sees half of it). A summary that cannot be written (a read-only or full disk) is left
 * unwritten: the next analysis reads the client file again.
 */
export async function writeClientSummary(
  path: string,
  key: ClientSummaryKey,
  summary: ClientSummary,
): Promise<void> {
  const passText = JSON.stringify(summary.pass);
  const header: SummaryHeader = {
    kind: KIND,
    schemaVersion: SCHEMA_VERSION,
    plateauVersion: PLATEAU_VERSION,
    key,
    readStats: summary.readStats,
    lastSecond: summary.lastSecond ?? null,
    passSha256: sha256(passText),
  };
  try {
    const packed = await promisify(gzip)(`${JSON.stringify(header)}\n${passText}\n`, { level: 1 });
    await writeFileAtomic(path, packed);
  } catch {
    // Best effort: without a summary the next analysis reads the client file again.
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function fileWords(key: Partial<ClientSummaryKey> | undefined): string {
  if (!key || typeof key.sizeBytes !== 'number' || typeof key.mtimeMs !== 'number') return 'an unknown file';
  return `${key.file} of ${key.sizeBytes.toLocaleString('en-US')} bytes modified ${new Date(key.mtimeMs).toISOString()}`;
}
