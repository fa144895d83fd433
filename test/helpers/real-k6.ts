// Finds a real k6 and runs a script on it and on the embedded engine, one after the other,
// with the same arguments, collecting what each wrote.

import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { PLATEAU_BIN } from './cli.ts';
import { isExecutable } from './processes.ts';
import { sharedPath } from './shared-fixtures.ts';

/** A k6 found for the suite: its path and `k6 version` line. */
export interface RealK6 {
  bin: string;
  version: string;
}

/**
 * K6_BIN, then shared/k6/k6 beside the checkout (CI lays shared/ there), then `k6` on PATH.
 * Returns the reason as a string when there is none, for the suite's one skip line.
 */
export function findRealK6(): RealK6 | string {
  const fromEnv = process.env.K6_BIN;
  // A K6_BIN that is set is the one wanted: a bad one is reported, not passed over.
  const candidates = fromEnv
    ? [fromEnv]
    : [
        sharedPath(join('k6', 'k6')),
        ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'k6')),
      ].filter((c): c is string => c !== undefined);
  const bin = candidates.find(isExecutable);
  if (!bin) {
    return fromEnv
      ? `K6_BIN=${fromEnv} is not an executable file`
      : 'no k6: set K6_BIN, put shared/ (with k6/k6) beside the checkout, or install k6 on PATH';
  }
  try {
    const version = execFileSync(bin, ['version'], { encoding: 'utf8', timeout: 10_000 })
      .split('\n')[0]!
      .trim();
    return { bin, version };
  } catch (error) {
    return `${bin} version failed: ${(error as Error).message}`;
  }
}

export type EngineName = 'embedded' | 'k6';

/** What one engine did with a script. */
export interface EngineOutcome {
  engine: EngineName;
  code: number | null;
  stdout: string;
  stderr: string;
  /** The `--out csv=` rows by column name ([] when none was written). */
  rows: Record<string, string>[];
  header: string[];
  /** The `--summary-export` file, parsed (undefined when none was written). */
  exported: { metrics: Record<string, Record<string, unknown>> } | undefined;
}

/**
 * Runs `k6 run <script> <args>` or `plateau engine run <script> <args>`, adding a CSV output
 * and a summary export in `dir` (named after the engine). Resolves when the process exits
 * or after `timeoutMs` (then SIGKILLed, code null). `onStart` may signal the child.
 */
export async function runEngine(
  engine: EngineName,
  k6: RealK6,
  script: string,
  args: string[],
  dir: string,
  options: { timeoutMs?: number; onStart?: (child: import('node:child_process').ChildProcess) => void } = {},
): Promise<EngineOutcome> {
  const csv = join(dir, `${engine}.csv`);
  const summary = join(dir, `${engine}-summary.json`);
  const common = [
    'run',
    '--quiet',
    '--no-color',
    '--out',
    `csv=${csv}`,
    `--summary-export=${summary}`,
    ...args,
    script,
  ];
  const [command, argv] =
    engine === 'k6' ? [k6.bin, common] : [process.execPath, [PLATEAU_BIN, 'engine', ...common]];
  const child = spawn(command, argv, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, K6_NO_USAGE_REPORT: 'true' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  options.onStart?.(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  const text = await readFile(csv)
    .then((b) => (b[0] === 0x1f && b[1] === 0x8b ? gunzipSync(b) : b).toString('utf8'))
    .catch(() => '');
  const rows = text ? (parse(text, { columns: true }) as Record<string, string>[]) : [];
  const header = text ? text.slice(0, text.indexOf('\n')).split(',') : [];
  const exported = await readFile(summary, 'utf8')
    .then((t) => JSON.parse(t) as EngineOutcome['exported'])
    .catch(() => undefined);
  return { engine, code, stdout, stderr, rows, header, exported };
}

/** What a suite comparing the two engines shares: real k6 (or why not), and a directory. */
export interface RealK6Suite {
  /** Real k6, when found. */
  k6: RealK6 | undefined;
  /** Each test's `skip`: false, or the one line saying why the suite did not run. */
  skip: string | false;
  /** A temporary directory for the suite's files, removed after it. */
  dir: string;
  /** An exit's code and the end of its stderr, for an assertion's message. */
  failure(outcome: EngineOutcome): string;
}

/**
 * Finds real k6 for the suite `name`, prints one line saying which (or why the suite is not
 * run), and makes its temporary directory, removed after the file's tests.
 */
export async function useRealK6(name: string): Promise<RealK6Suite> {
  const found = findRealK6();
  const k6 = typeof found === 'string' ? undefined : found;
  const skip = typeof found === 'string' ? `${name} suite not run: ${found}` : false;
  process.stdout.write(skip ? `# ${skip}\n` : `# ${name} suite: ${k6!.version} (${k6!.bin})\n`);
  const dir = await mkdtemp(join(tmpdir(), `plateau-${name}-`));
  after(() => rm(dir, { recursive: true, force: true }));
  return {
    k6,
    skip,
    dir,
    failure: (o) => `${o.engine} exit ${o.code}\n${o.stderr.slice(-1500)}`,
  };
}
