// Writes a file so that readers never see it half-written: temp file, then rename.
import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';

/**
 * Writes `data` to `path` through a temporary file in the same directory and a rename. When
 * the write fails (a full disk) `path` keeps what it held, the part-written temporary file is
 * removed, and the error is rethrown.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, data);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}
