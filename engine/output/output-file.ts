// The file an output writes to: stdout for `-`, gzip for a `.gz` suffix. It never lets a
// failing file crash the engine or grow its memory without bound: a write error (a full
// disk, a reader that went away) or a queue past its cap (a disk slower than the samples)
// is reported once, to the listener the output was opened with, and the test stops there.
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { constants, createGzip, type Gzip } from 'node:zlib';
import { ERROR_CODES, PlateauError } from '../../contract/index.ts';
import { why } from '../../lib/fs-error-words.ts';

/** A text sink that an output writes to and closes once. */
export interface OutputFile {
  write(data: string | Buffer): void;
  /**
   * Ends a gzip block here so that what was written so far reaches the file whole (a no-op
   * for plain files): the output's save interval calls it, so an engine that is killed
   * leaves a file readable up to its last save.
   */
  sync(): void;
  /**
   * Flushes and closes (stdout is flushed, not closed). After a write error it resolves at
   * once; after the queue's cap it waits while the file still takes bytes, and gives up
   * when it has taken none for {@link STALLED_MS}.
   */
  close(): Promise<void>;
  /** Why the file stopped taking the samples, once it has; undefined while it takes them. */
  readonly failure: PlateauError | undefined;
}

export interface OutputFileOptions {
  /**
   * Told when the file stops taking the samples (the test should stop), and once more if,
   * closing, it is given up with bytes not written.
   */
  onFailure?: (failure: PlateauError) => void;
  /**
   * Bytes that may wait for the file (before and after gzip) before the output counts as
   * failed, {@link MAX_QUEUED_BYTES} by default.
   */
  maxQueuedBytes?: number;
}

/**
 * What may wait for a slow file: room to ride out a disk that stalls for a while, and a bound
 * that keeps a file that never catches up from holding more memory than the rest of the
 * engine (docs/engine.md, "Memory over a long run").
 */
export const MAX_QUEUED_BYTES = 256 * 1024 * 1024;
/** A failed file that has taken no bytes for this long while closing is given up. */
export const STALLED_MS = 10_000;

/**
 * Opens `fileName` for an output (`what` names it in errors): `-` is stdout, a `.gz`
 * suffix compresses. Fails with a clear message when the file cannot be created.
 */
export async function openOutputFile(
  fileName: string,
  what: string,
  options: OutputFileOptions = {},
): Promise<OutputFile> {
  // Level 1: at tens of thousands of rows per second, compression CPU matters more than size.
  const gzip = fileName.endsWith('.gz') ? createGzip({ level: 1 }) : undefined;
  if (fileName === '-') {
    gzip?.pipe(process.stdout, { end: false });
    return new GuardedFile(process.stdout, gzip, `the ${what} output on stdout`, false, options);
  }
  const file = createWriteStream(fileName);
  await new Promise<void>((resolve, reject) => {
    file.once('open', () => resolve());
    file.once('error', (error) =>
      reject(
        new PlateauError(ERROR_CODES.INPUT, `cannot write the ${what} output ${fileName}: ${why(error)}`, {
          hint: 'check that the directory exists and is writable',
          cause: error,
        }),
      ),
    );
  });
  gzip?.pipe(file);
  return new GuardedFile(file, gzip, `the ${what} output ${fileName}`, true, options);
}

/** A file (or stdout) behind an optional gzip, watched for errors and for its queue. */
class GuardedFile implements OutputFile {
  readonly #sink: Writable;
  readonly #gzip: Gzip | undefined;
  readonly #name: string;
  readonly #ends: boolean;
  readonly #onFailure: ((failure: PlateauError) => void) | undefined;
  readonly #maxQueued: number;
  #failure: PlateauError | undefined;
  /** Set by a write error: nothing more can be written. */
  #broken = false;

  constructor(
    sink: Writable,
    gzip: Gzip | undefined,
    name: string,
    ends: boolean,
    options: OutputFileOptions,
  ) {
    this.#sink = sink;
    this.#gzip = gzip;
    this.#name = name;
    this.#ends = ends;
    this.#onFailure = options.onFailure;
    this.#maxQueued = options.maxQueuedBytes ?? MAX_QUEUED_BYTES;
    const onError = (error: Error) => this.#broke(error);
    gzip?.on('error', onError);
    sink.on('error', onError);
  }

  get failure(): PlateauError | undefined {
    return this.#failure;
  }

  write(data: string | Buffer): void {
    if (this.#broken) return;
    (this.#gzip ?? this.#sink).write(data);
    if (this.#failure === undefined && this.#queued() > this.#maxQueued) {
      const mb = (this.#queued() / 1024 / 1024).toFixed(0);
      this.#fail(
        new PlateauError(
          ERROR_CODES.INPUT,
          `${this.#name} fell behind: ${mb} MB of samples wait for the file, which takes them slower than the test makes them; the test stops here, and what waits is still written`,
          {
            hint: 'write the output to a faster disk, or leave it out (--out) for a run this long or this fast',
          },
        ),
      );
    }
  }

  sync(): void {
    const gzip = this.#gzip;
    if (gzip && !this.#broken && !gzip.writableEnded) gzip.flush(constants.Z_SYNC_FLUSH);
  }

  close(): Promise<void> {
    if (this.#broken) {
      this.#gzip?.destroy();
      if (this.#ends) this.#sink.destroy();
      return Promise.resolve();
    }
    const done = new Promise<void>((resolve) => {
      if (this.#ends) this.#sink.once('finish', () => resolve());
      else if (this.#gzip) this.#gzip.once('end', () => resolve());
      else resolve();
      this.#sink.once('error', () => resolve());
      this.#gzip?.once('error', () => resolve());
    });
    if (this.#gzip) this.#gzip.end();
    else if (this.#ends) this.#sink.end();
    return this.#failure === undefined ? done : this.#untilStalled(done);
  }

  /** `done`, or the moment the file has taken no bytes for STALLED_MS (then it is given up). */
  async #untilStalled(done: Promise<void>): Promise<void> {
    let last = this.#queued();
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<'stalled'>((resolve) => {
      timer = setInterval(() => {
        const now = this.#queued();
        if (now >= last) resolve('stalled');
        last = now;
      }, STALLED_MS);
    });
    const how = await Promise.race([done, stalled]);
    clearInterval(timer);
    if (how !== 'stalled') return;
    const mb = (this.#queued() / 1024 / 1024).toFixed(1);
    this.#onFailure?.(
      new PlateauError(
        ERROR_CODES.INPUT,
        `${this.#name} took nothing for ${STALLED_MS / 1000} s: given up, ${mb} MB of samples not written`,
      ),
    );
    this.#broken = true;
    this.#gzip?.destroy();
    if (this.#ends) this.#sink.destroy();
  }

  /** Bytes written to this file that have not reached it yet. */
  #queued(): number {
    const gzip = this.#gzip;
    return (gzip ? gzip.writableLength + gzip.readableLength : 0) + this.#sink.writableLength;
  }

  #broke(error: Error): void {
    if (this.#broken) return;
    this.#broken = true;
    this.#fail(
      new PlateauError(
        ERROR_CODES.INPUT,
        `${this.#name} cannot be written: ${why(error)}; the test stops here, and the file holds the samples written before`,
        { hint: hintFor(error), cause: error },
      ),
    );
  }

  #fail(failure: PlateauError): void {
    if (this.#failure) return;
    this.#failure = failure;
    this.#onFailure?.(failure);
  }
}

/** What to do about a write error, by its code. */
function hintFor(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return 'free space on its disk, or write it where there is room';
  if (code === 'EPIPE') return 'keep whatever reads the output running until the test ends';
  return 'write the output to a file on a disk that works';
}

/** Size of the chunks text is packed into before it goes to the stream. */
const CHUNK_BYTES = 256 * 1024;

/**
 * Packs many small strings into fixed-size Buffers and hands each full one to the file,
 * so a high-rate output neither joins huge strings nor calls write() per row.
 */
export class ChunkedWriter {
  readonly #file: OutputFile;
  #chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  #used = 0;

  constructor(file: OutputFile) {
    this.#file = file;
  }

  append(text: string): void {
    // Worst case 3 bytes per UTF-16 unit; rows are far smaller than a chunk.
    if (this.#used + text.length * 3 > CHUNK_BYTES) {
      this.flush();
      if (text.length * 3 > CHUNK_BYTES) {
        this.#file.write(text);
        return;
      }
    }
    this.#used += this.#chunk.write(text, this.#used);
  }

  /**
   * The chunk, with room for `bytes` more from `used` (what is packed so far goes to the
   * file first when there is not): for callers that encode rows in place, then commit().
   * `bytes` must not be more than a chunk holds (`fits`).
   */
  reserve(bytes: number): Buffer {
    if (this.#used + bytes > CHUNK_BYTES) this.flush();
    return this.#chunk;
  }

  /** Whether `bytes` fit into one chunk, so that reserve() can give room for them. */
  static fits(bytes: number): boolean {
    return bytes <= CHUNK_BYTES;
  }

  /** Bytes of the chunk used so far: where the caller of reserve() writes. */
  get used(): number {
    return this.#used;
  }

  /** Takes the bytes the caller wrote into the reserved chunk, up to `used`. */
  commit(used: number): void {
    this.#used = used;
  }

  /** Hands whatever is packed so far to the file. */
  flush(): void {
    if (this.#used === 0) return;
    this.#file.write(this.#chunk.subarray(0, this.#used));
    this.#chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    this.#used = 0;
  }
}
