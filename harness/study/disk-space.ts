// Room on the disk of a run directory: checked before a study, watched during it, and kept
// for its final files, so a disk that fills still leaves run.json, the record and the report.
import { rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES, PlateauError } from '../../contract/index.ts';
import { why } from '../../lib/fs-error-words.ts';
import { RESERVE_FILE } from './run-dir.ts';
import type { PartEnding, StudyPart } from './study-parts.ts';

/**
 * Bytes kept for what a study writes after its load (run.json, server.json, generator.json,
 * analysis.json, resources.json, record.txt, table.md and report.html) for a study planned to
 * last `plannedSeconds`. A 15 s study writes about 150 KB of them (report.html 85 KB, uPlot
 * inlined; resources.json and the charts grow by about 4 KB a second): this keeps twice that.
 */
export function finalFilesBytes(plannedSeconds: number): number {
  return Math.max(512 * 1024, 256 * 1024 + Math.ceil(plannedSeconds) * 8 * 1024);
}

/** Free bytes a study needs to begin, beyond the reserve: a short study writes about 0.3 MB. */
export const MIN_FREE_BYTES = 1024 * 1024;

/** Below this many free bytes the disk counts as full (a write of a CSV chunk would fail). */
export const FULL_BELOW_BYTES = 64 * 1024;

/** How often the study looks at the disk, ms. */
const WATCH_EVERY_MS = 1000;

/** Bytes an unprivileged process may still write where `dir` is. */
export async function freeBytes(dir: string): Promise<number> {
  const fs = await statfs(dir);
  return fs.bavail * fs.bsize;
}

/** `1.2 MB`, `48 KB`. */
export function sizeWords(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${Math.round((bytes / 1048576) * 10) / 10} MB`
    : `${Math.round(bytes / 1024)} KB`;
}

/**
 * Room kept for a study's final files: a file of `bytes` ({@link finalFilesBytes}) in the run
 * directory, written before anything else and removed at the study's end, just before the
 * final files are written. Taking it on a disk without room for it and for
 * {@link MIN_FREE_BYTES} more is a PlateauError (exit 104) naming the disk's free space.
 */
export class SpaceReserve {
  readonly #path: string;
  #held = true;

  private constructor(path: string) {
    this.#path = path;
  }

  static async take(dir: string, out: string, bytes: number): Promise<SpaceReserve> {
    const path = join(dir, RESERVE_FILE);
    const refuse = (detail: string, cause?: unknown) =>
      new PlateauError(ERROR_CODES.INPUT, `the disk holding ${out} ${detail}`, {
        hint: `this study needs ${sizeWords(bytes + MIN_FREE_BYTES)} free at least, more if it is fast: free some space or choose another --out`,
        ...(cause ? { cause } : {}),
      });
    try {
      await writeFile(path, Buffer.alloc(bytes));
    } catch (error) {
      await rm(path, { force: true });
      throw refuse(`has no room for the study's files: ${why(error)}`, error);
    }
    const free = await freeBytes(dir);
    if (free < MIN_FREE_BYTES) {
      await rm(path, { force: true });
      throw refuse(`has only ${sizeWords(free + bytes)} free`);
    }
    return new SpaceReserve(path);
  }

  /** Gives the room back for the final files (idempotent). */
  async release(): Promise<void> {
    if (!this.#held) return;
    this.#held = false;
    await rm(this.#path, { force: true });
  }
}

/** The disk-full ending for `dir` when it has less than {@link FULL_BELOW_BYTES} free, else undefined. */
export async function diskFull(dir: string): Promise<PartEnding | undefined> {
  const free = await freeBytes(dir).catch(() => Number.POSITIVE_INFINITY);
  if (free >= FULL_BELOW_BYTES) return undefined;
  return {
    reason: 'disk-full',
    detail: `the disk holding ${dir} filled (${sizeWords(free)} free)`,
    hint: 'free some space on that disk, or give --out a directory on a larger one',
  };
}

/**
 * A study part that looks at the run directory's disk once a second and ends the study when
 * it is full: the load's output could no longer be written, so what follows would be lost.
 */
export class DiskWatch implements StudyPart {
  readonly name = 'disk watch';
  readonly ended: Promise<PartEnding>;
  readonly #timer: NodeJS.Timeout;

  constructor(dir: string) {
    let report: (ending: PartEnding) => void = () => undefined;
    this.ended = new Promise((resolve) => {
      report = resolve;
    });
    let looking = false;
    this.#timer = setInterval(() => {
      if (looking) return;
      looking = true;
      void diskFull(dir)
        .then((full) => full && report(full))
        .finally(() => {
          looking = false;
        });
    }, WATCH_EVERY_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
  }
}
