// The small study with hand-checkable answers that several end-to-end tests run.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AnalysisResult, RunManifest } from '../../contract/index.ts';
import { plateau } from './cli.ts';

/**
 * The reference service's statements in the tests' studies: 4 KB. The default 88 KB costs the
 * service ~3 ms of CPU each to render and gzip (half a core at 160/s), which end-to-end tests
 * sharing the machine (test/run-tests.mjs) would take from each other; the pool, the queue and
 * the verdict they test do not depend on it.
 */
export const TEST_PAYLOAD = ['--set', 'PAYLOAD_KB=4'] as const;

/**
 * A 2-connection pool, 20 ms queries, and three 3 s steps past its ~80/s ceiling
 * (2 ÷ ~0.025 s held per request). Add `--recovery`, `--recovery-rate` and the rest.
 */
export const SMALL_STUDY = [
  '--set',
  'POOL_MAX=2',
  '--set',
  'QUERY_MS=20',
  ...TEST_PAYLOAD,
  '--steps',
  '40,120,160',
  '--hold',
  '3',
  '--ramp',
  '1',
] as const;

/** Runs `plateau run args… --json --out out`, which must exit 0; returns its analysis and run.json. */
export async function runStudy(
  out: string,
  args: readonly string[],
): Promise<{ analysis: AnalysisResult & { runDir: string }; manifest: RunManifest; stderr: string }> {
  const result = await plateau(['run', ...args, '--json', '--out', out]);
  assert.equal(result.code, 0, result.stderr);
  const analysis = JSON.parse(result.stdout) as AnalysisResult & { runDir: string };
  const manifest = JSON.parse(await readFile(join(analysis.runDir, 'run.json'), 'utf8')) as RunManifest;
  return { analysis, manifest, stderr: result.stderr };
}
