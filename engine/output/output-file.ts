// The file an output writes to: stdout for `-`, gzip for a `.gz` suffix.
import { createWriteStream } from 'node:fs';
import { constants, createGzip } from 'node:zlib';
import { ERROR_CODES, PlateauError } from '../../contract/index.ts';

/** A text sink that an output writes to and closes once. */
export interface OutputFile {
  write(data: string | Buffer): void;
  /**
   * Ends a gzip block here so that what was written so far reaches the file whole (a no-op
   * for plain files): the output's save interval calls it, so an engine that is killed
   * leaves a file readable up to its last save.
   */
  sync(): void;
  /** Flushes and closes (stdout is flushed, not closed). */
  close(): Promise<void>;
}

/**
 * Opens `fileName` for an output (`what` names it in errors): `-` is stdout, a `.gz`
 * suffix compresses. Fails with a clear message when the file cannot be created.
 */
export async function openOutputFile(fileName: string, what: string): Promise<OutputFile> {
  // Level 1: at tens of thousands of rows per second, compression CPU matters more than size.
  const gzip = fileName.endsWith('.gz') ? createGzip({ level: 1 }) : undefined;
  if (fileName === '-') {
    gzip?.pipe(process.stdout, { end: false });
    return {
      write: (data) => (gzip ?? process.stdout).write(data),
      sync: () => syncGzip(gzip),
      close: () => new Promise<void>((resolve) => (gzip ? gzip.end(resolve) : resolve())),
    };
  }
  const file = createWriteStream(fileName);
  await new Promise<void>((resolve, reject) => {
    file.once('open', () => resolve());
    file.once('error', (error) =>
      reject(
        new PlateauError(ERROR_CODES.INPUT, `cannot write the ${what} output ${fileName}: ${error.message}`, {
          hint: 'check that the directory exists and is writable',
          cause: error,
        }),
      ),
    );
  });
  gzip?.pipe(file);
  return {
    write: (data) => (gzip ?? file).write(data),
    sync: () => syncGzip(gzip),
    close: () =>
      new Promise<void>((resolve, reject) => {
        file.once('finish', () => resolve());
        file.once('error', reject);
        (gzip ?? file).end();
      }),
  };
}

/**
 * Z_SYNC_FLUSH: deflate emits what it holds, ending on a byte boundary, so a reader of the
 * file cut there gets every row written so far (at the cost of a few bytes per save). At
 * level 1 deflate otherwise holds up to its 16 K symbols: seconds of rows at a low rate.
 */
function syncGzip(gzip: ReturnType<typeof createGzip> | undefined): void {
  if (gzip && !gzip.writableEnded) gzip.flush(constants.Z_SYNC_FLUSH);
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
