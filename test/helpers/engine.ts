// Runs scripts through the embedded engine in-process, capturing logs, stdout and files.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { type RunConfig, type RunResult, runTest } from '../../engine/runner.ts';

export interface EngineRun extends RunResult {
  logs: string[];
  stdout: string;
  /** The CSV output's rows, parsed by column name. */
  rows: Record<string, string>[];
  /** The --summary-export file, parsed. */
  exported: { metrics: Record<string, Record<string, unknown>>; root_group: unknown } | undefined;
  dir: string;
}

let workDir: string | undefined;
after(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** Writes `source` as a script file and returns its path. */
export async function writeScript(source: string, name = 'script.js'): Promise<string> {
  workDir ??= await mkdtemp(join(tmpdir(), 'plateau-engine-test-'));
  const dir = await mkdtemp(join(workDir, 'run-'));
  const path = join(dir, name);
  await writeFile(path, source);
  return path;
}

/** Runs `script` (a path) with a CSV output and a summary export, and reads them back. */
export async function runScript(script: string, config: Partial<RunConfig> = {}): Promise<EngineRun> {
  const dir = script.slice(0, script.lastIndexOf('/'));
  const logs: string[] = [];
  let stdout = '';
  const csv = join(dir, 'out.csv.gz');
  const exportFile = join(dir, 'summary.json');
  const result = await runTest({
    script,
    includeSystemEnv: false,
    outputs: [{ type: 'csv', arg: csv }],
    summaryExport: exportFile,
    logger: {
      log: (level, message, fields) => logs.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`),
    },
    stdout: (text) => {
      stdout += text;
    },
    ...config,
  });
  const rows = await readFile(csv)
    .then((buffer) => parse(gunzipSync(buffer), { columns: true }) as Record<string, string>[])
    .catch(() => []);
  const exported = await readFile(exportFile, 'utf8')
    .then((text) => JSON.parse(text))
    .catch(() => undefined);
  return { ...result, logs, stdout, rows, exported, dir };
}

/** The checks of a run, from its CSV rows: check name → [passes, fails]. */
export function checkResults(rows: readonly Record<string, string>[]): Record<string, [number, number]> {
  const seen: Record<string, [number, number]> = {};
  for (const row of rows) {
    if (row.metric_name !== 'checks') continue;
    const name = row.check ?? '';
    const entry = seen[name] ?? [0, 0];
    entry[row.metric_value === '1.000000' ? 0 : 1]++;
    seen[name] = entry;
  }
  return seen;
}
