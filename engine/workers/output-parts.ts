// Joins the workers' shares of an output into the one file the user asked for, once the
// test has ended: gzip allows members one after another, so a .gz part is appended as it is.
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { WholeLines } from '../../analysis/whole-lines.ts';

/** A worker's share of an output: its file, and whether the worker closed it (it did not die). */
export interface OutputPart {
  path: string;
  whole: boolean;
}

/**
 * Makes `parts[0].path` (worker 0 writes the output itself, header included) the whole
 * output: every other part appended in worker order, then removed. A part whose worker
 * died is cut at its last whole line first (a .gz one inflated to it and compressed again
 * as a member of its own, since a member cut short would hide every member after it); a
 * part never created is skipped. Worker 0's own file, when it died, is cut the same way
 * before anything is appended. Costs a copy of the other workers' shares (worker 0's is
 * never copied unless it died); gzip needs no recompression.
 */
export async function joinOutputParts(parts: readonly OutputPart[]): Promise<void> {
  const [first, ...rest] = parts;
  if (!first) return;
  const target = first.path;
  const gzip = target.endsWith('.gz');
  if (!first.whole && (await exists(target))) {
    const cut = `${target}.cut`;
    await rename(target, cut);
    await appendPart(cut, target, gzip, false);
    await rm(cut, { force: true });
  }
  for (const part of rest) {
    if (!(await exists(part.path))) continue;
    await appendPart(part.path, target, gzip, part.whole);
    await rm(part.path, { force: true });
  }
}

/** Appends `from` to `to`: as it is when whole, else up to its last whole line. */
async function appendPart(from: string, to: string, gzip: boolean, whole: boolean): Promise<void> {
  const out = createWriteStream(to, { flags: 'a' });
  if (whole) {
    await pipeline(createReadStream(from), out);
    return;
  }
  const lines = new WholeLines();
  const source: Readable = createReadStream(from);
  const onCut = () => lines.cutOff();
  if (gzip) {
    const gunzip = createGunzip();
    // A member cut short errors here: what came before it is kept, the part line dropped.
    gunzip.once('error', onCut);
    source.pipe(gunzip).pipe(lines);
  } else {
    // A plain file has no end marker: its last line without a newline may be cut mid-row.
    source.once('end', onCut);
    source.pipe(lines, { end: false });
  }
  const sink: Writable = out;
  await (gzip ? pipeline(lines, createGzip({ level: 1 }), sink) : pipeline(lines, sink));
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
