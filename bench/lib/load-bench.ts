// What the load benchmarks share: a pinned trivial target, CPU accounting from /proc, and
// the arrival statistics that judge a generator from the target's side.

import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engineNodeFlags } from '../../engine/node-flags.ts';
import { childPids, processCpuUs } from '../../lib/proc-stat.ts';

/** The repository root. */
export const BENCH_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** CPU µs (user + system) a process has used so far, from /proc; 0 once it is gone. */
const cpuUs = (pid: number): number => processCpuUs(pid) ?? 0;

/** Runs `command` pinned to `core` (e.g. "0" or "0,1"), sampling its CPU until it exits. */
export async function measured(
  core: number | string,
  command: string,
  args: string[],
): Promise<{ cpuUs: number; stdout: string; code: number | null }> {
  const child = spawn('taskset', ['-c', String(core), command, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on('data', () => undefined);
  let last = 0;
  const timer = setInterval(() => {
    last = Math.max(last, cpuUs(child.pid!));
  }, 200);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearInterval(timer);
  return { cpuUs: last, stdout, code };
}

/**
 * Runs `command` pinned to `cores`, as {@link measured}, sampling the CPU of it and of each of
 * its children (engine workers): `cpuUs` is the command's own first, then each child's by
 * pid, each the last reading before it ended.
 */
export async function measuredTree(
  cores: number | string,
  command: string,
  args: string[],
): Promise<{ cpuUs: number[]; stdout: string; code: number | null }> {
  const child = spawn('taskset', ['-c', String(cores), command, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on('data', () => undefined);
  const last = new Map<number, number>();
  // Children are looked for once a second (a scan of /proc costs the machine being measured);
  // the CPU of those found is read every 200 ms.
  let pids = [child.pid!];
  const find = setInterval(() => {
    pids = [child.pid!, ...childPids(child.pid!)];
  }, 1000);
  const sample = () => {
    for (const pid of pids) {
      const us = processCpuUs(pid);
      if (us !== undefined) last.set(pid, Math.max(last.get(pid) ?? 0, us));
    }
  };
  const timer = setInterval(sample, 200);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearInterval(timer);
  clearInterval(find);
  const own = last.get(child.pid!) ?? 0;
  last.delete(child.pid!);
  return { cpuUs: [own, ...[...last].sort((a, b) => a[0] - b[0]).map(([, us]) => us)], stdout, code };
}

/**
 * A second of autocannon traffic from `core` so that the target is warm, as a real service
 * would be when it is measured; then its counters are reset.
 */
export async function warmTarget(url: string, core: number | string = 0): Promise<void> {
  await measured(core, process.execPath, [
    join(BENCH_ROOT, 'node_modules/autocannon/autocannon.js'),
    '-d',
    '1',
    '-c',
    '50',
    `${url}/`,
  ]);
  await fetch(`${url}/__reset`);
}

/**
 * The flags a benchmark gives either generator: quiet, a gzipped CSV and a summary export (as
 * in a real study), `extra` flags, and `env` as `-e K=V`.
 */
function runFlags(
  files: { csv: string; summary: string },
  env: Record<string, string | number>,
  extra: string[],
): string[] {
  return [
    '-q',
    '--out',
    `csv=${files.csv}`,
    '--summary-export',
    files.summary,
    ...extra,
    ...Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]),
  ];
}

/** The command line of an engine run as the benchmarks make it: the engine's Node flags, then {@link runFlags}. */
export function engineRunArgs(
  script: string,
  files: { csv: string; summary: string },
  env: Record<string, string | number>,
  extra: string[] = [],
): string[] {
  return [
    ...engineNodeFlags(),
    join(BENCH_ROOT, 'bin/plateau.js'),
    'engine',
    'run',
    script,
    ...runFlags(files, env, extra),
  ];
}

/** The arguments of real k6 run as the benchmarks run it: {@link runFlags}, then the script. */
export function k6RunArgs(
  script: string,
  files: { csv: string; summary: string },
  env: Record<string, string | number>,
  extra: string[] = [],
): string[] {
  return ['run', ...runFlags(files, env, extra), script];
}

/** Starts bench/lib/target-server.mjs pinned to `cores`. */
export async function startTarget(cores = '1'): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    'taskset',
    ['-c', cores, process.execPath, join(BENCH_ROOT, 'bench/lib/target-server.mjs')],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<string>((resolve) =>
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())),
  );
  return { child, url: `http://127.0.0.1:${port}` };
}

/**
 * Arrival statistics at the target; "steady" leaves out the first second (connections).
 * Lag is each arrival's offset from its planned start i/rate (the generator sends its
 * iterationInTest as ?i=, so drops do not skew it), against t0 = the earliest offset of the
 * process that sent it (&s=): processes of one test start a few ms apart, as k6 instances do.
 * `connections`: how many the generator opened to the target.
 */
export async function stats(url: string, rate: number, planned: number) {
  const body = (await (await fetch(`${url}/__stats`)).json()) as {
    count: number;
    times: number[];
    planned: number[];
    sources: number[];
    connections: number;
  };
  const { count, times, sources, connections } = body;
  await fetch(`${url}/__reset`);
  if (count === 0) return { received: 0, achievedPct: 0 };
  const origin = times[0]!;
  const steady = times.filter((t) => t - origin >= 1000);
  const index = body.planned.every((p) => p >= 0) ? body.planned : times.map((_, i) => i);
  const offsets = times.map((t, k) => t - (index[k]! * 1000) / rate);
  const t0 = new Map<number, number>();
  offsets.forEach((offset, k) => {
    t0.set(sources[k]!, Math.min(t0.get(sources[k]!) ?? offset, offset));
  });
  const sortedLags = offsets
    .map((offset, k) => offset - t0.get(sources[k]!)!)
    .filter((_, k) => times[k]! - origin >= 1000)
    .sort((a, b) => a - b);
  const lagAt = (q: number) =>
    sortedLags.length ? sortedLags[Math.floor(q * (sortedLags.length - 1))]! : Number.NaN;
  const windows = new Map<number, number>();
  const last = times.at(-1)!;
  for (let w = 100; w <= Math.floor((last - origin) / 10); w++) windows.set(w, 0);
  for (const t of steady) {
    const w = Math.floor((t - origin) / 10);
    if (windows.has(w)) windows.set(w, windows.get(w)! + 1);
  }
  const counts = [...windows.values()];
  const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
  const sd = Math.sqrt(counts.reduce((a, c) => a + (c - mean) ** 2, 0) / counts.length);
  const steadyPlanned = planned - rate;
  return {
    received: count,
    connections,
    achievedPct: Math.round((count / planned) * 10000) / 100,
    steadyAchievedPct: Math.round((steady.length / steadyPlanned) * 10000) / 100,
    steadyLagP50Ms: Math.round(lagAt(0.5) * 100) / 100,
    steadyLagP99Ms: Math.round(lagAt(0.99) * 100) / 100,
    steadyCv10ms: Math.round((sd / mean) * 100) / 100,
  };
}

/**
 * Writes the benchmarks' k6 script: one constant-arrival-rate scenario (RATE, DURATION, VUS
 * preallocated, 4 × VUS at most) whose iteration GETs TARGET with its iterationInTest and
 * the sending process (SOURCE, default 0) in the query, for stats().
 */
export async function writeConstantRateScript(
  path: string,
  form: 'async' | 'blocking' = 'async',
): Promise<void> {
  const url = "__ENV.TARGET + '/?i=' + exec.scenario.iterationInTest + '&s=' + (__ENV.SOURCE || 0)";
  // The same request in k6's two forms: awaited asyncRequest, or the blocking http.get
  // that the engine rewrites to be awaited (engine/js/blocking-calls.ts).
  const body =
    form === 'async'
      ? `export default async function () {\n  await http.asyncRequest('GET', ${url});\n}`
      : `export default function () {\n  http.get(${url});\n}`;
  await writeFile(
    path,
    `import http from 'k6/http';
import exec from 'k6/execution';
export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: Number(__ENV.RATE),
  duration: __ENV.DURATION, preAllocatedVUs: Number(__ENV.VUS), maxVUs: Number(__ENV.VUS) * 4 } } };
${body}`,
  );
}
