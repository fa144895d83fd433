// A study of the JVM service (examples/jvm-service) through its published meters alone, for
// the suites about "any service".
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AnalysisResult } from '../../contract/index.ts';
import { plateau } from './cli.ts';
import { startJvmService } from './jvm-service.ts';

/** What a JVM study left: its analysis (with the run directory) and its record. */
export interface JvmStudy {
  analysis: AnalysisResult & { runDir: string };
  record: string;
}

/**
 * Starts the JVM service with `env` against `databaseUrl`, studies it at `steps` (4 s holds)
 * reading only `--metrics`, writes the run under `outDir`, and stops the service. `cpus` pins
 * the JVM to those cores; `prefix` runs plateau under a command (taskset…).
 */
export async function studyJvm(
  databaseUrl: string,
  outDir: string,
  env: Record<string, string | number>,
  steps: string,
  options: { cpus?: string; prefix?: string[] } = {},
): Promise<JvmStudy> {
  const service = await startJvmService({ databaseUrl, env, cpus: options.cpus });
  try {
    const result = await plateau(
      [
        'run',
        ...['--target', service.ordersUrl, '--metrics', service.metricsUrl],
        ...['--steps', steps, '--hold', '4', '--ramp', '1', '--recovery', '4', '--recovery-rate', '10'],
        ...['--no-postgres-activity', '--json', '--out', outDir],
      ],
      { prefix: options.prefix },
    );
    assert.equal(result.code, 0, `${result.stderr}\n${service.log()}`);
    const analysis = JSON.parse(result.stdout) as AnalysisResult & { runDir: string };
    return { analysis, record: await readFile(join(analysis.runDir, 'record.txt'), 'utf8') };
  } finally {
    await service.stop();
  }
}
