// Waiting on a study's run directory from a test: it appears, and run.json says where the load is.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunManifest } from '../../contract/index.ts';
import { waitFor } from './processes.ts';

/** The run directory that appears under `dir` besides those in `before`, once it has a run.json. */
export async function newRunDirIn(dir: string, before: readonly string[]): Promise<string> {
  let found: string | undefined;
  const appeared = await waitFor(() => {
    const runs = existsSync(dir) ? readdirSync(dir) : [];
    found = runs
      .filter((r) => !before.includes(r))
      .map((r) => join(dir, r))
      .find((r) => existsSync(join(r, 'run.json')));
    return found !== undefined;
  }, 60_000);
  assert.ok(appeared && found, `a run directory appears in ${dir}`);
  return found;
}

/** A run directory's run.json. */
export function readManifest(dir: string): RunManifest {
  return JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunManifest;
}

/** Waits until run.json says the load reached `step` (it is rewritten as each step begins). */
export async function reached(dir: string, step: string): Promise<void> {
  const ok = await waitFor(() => {
    try {
      return readManifest(dir).reachedStep === step;
    } catch {
      return false; // between the temp file and its rename
    }
  }, 60_000);
  assert.ok(ok, `run.json reached ${step}`);
}
