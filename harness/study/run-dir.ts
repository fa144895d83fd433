// Run directories: runs/<id>/ with an id that sorts by time and never collides.
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ERROR_CODES, PlateauError, type RunManifest } from '../../contract/index.ts';
import { writeFileAtomic } from '../../lib/atomic-write.ts';

/** `20261201-101500-a1b2c3`: UTC time to the second, then random hex so ids never collide. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

/** Creates `<outDir>/<id>/` and returns its path and id. */
export async function createRunDir(outDir: string): Promise<{ id: string; dir: string }> {
  const id = newRunId();
  const dir = resolve(join(outDir, id));
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `cannot create the run directory ${dir}: ${(error as Error).message}`,
      {
        hint: 'choose a writable --out directory',
        cause: error,
      },
    );
  }
  return { id, dir };
}

/** Writes run.json atomically (an interrupted run never leaves a half-written manifest). */
export function writeManifest(dir: string, manifest: RunManifest): Promise<void> {
  return writeFileAtomic(join(dir, 'run.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}
