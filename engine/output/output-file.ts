// The file an output writes to: stdout for `-`, gzip for a `.gz` suffix.
import { createWriteStream } from 'node:fs';
import { createGzip } from 'node:zlib';
import { ERROR_CODES, PlateauError } from '../../contract/index.ts';

/** A text sink that an output writes to and closes once. */
export interface OutputFile {
  write(text: string): void;
  /** Flushes and closes (stdout is flushed, not closed). */
  close(): Promise<void>;
}

/**
 * Opens `fileName` for an output (`what` names it in errors): `-` is stdout, a `.gz`
 * suffix compresses. Fails with a clear message when the file cannot be created.
 */
export async function openOutputFile(fileName: string, what: string): Promise<OutputFile> {
  const gzip = fileName.endsWith('.gz') ? createGzip() : undefined;
  if (fileName === '-') {
    gzip?.pipe(process.stdout, { end: false });
    return {
      write: (text) => (gzip ?? process.stdout).write(text),
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
    write: (text) => (gzip ?? file).write(text),
    close: () =>
      new Promise<void>((resolve, reject) => {
        file.once('finish', () => resolve());
        file.once('error', reject);
        (gzip ?? file).end();
      }),
  };
}
