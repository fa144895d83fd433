// Writes a file so that readers never see it half-written: temp file, then rename.
import { randomBytes } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';

/** Writes `data` to `path` through a temporary file in the same directory and a rename. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, data);
  await rename(temporary, path);
}
