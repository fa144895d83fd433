// Benchmark: do engine workers scale? `plateau engine run --workers 1` at a rate, then
// `--workers N` at N times that rate, against the same trivial target, measured from the
// target's side as bench/engine-accuracy.ts measures one process: achieved, dropped, start
// lag p50/p99 (every worker's clock starts at one moment, so one origin for all), CV per
// 10 ms, and each process's CPU (coordinator and workers, from /proc).
//
// Cores: the engine's processes run on cores 0..N-1 (taskset; the workers inherit it and the
// system spreads them), the target on the cores after them. On a machine with no core left
// for the target (2 cores, 2 workers) it runs unpinned and takes its CPU from the workers;
// the 1-worker case then pins it to core 1. BENCH_TARGET_CORES (e.g. "8-9") chooses them.
//
//   node --import tsx bench/engine-scale.ts [rate=5000] [seconds=10] [workers=cores]
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  engineRunArgs,
  measuredTree,
  startTarget,
  stats,
  warmTarget,
  writeConstantRateScript,
} from './lib/load-bench.ts';

const rate = Number(process.argv[2] ?? 5000);
const seconds = Number(process.argv[3] ?? 10);
const cores = availableParallelism();
const workers = Number(process.argv[4] ?? cores);
if (!Number.isInteger(workers) || workers < 2 || workers > cores) {
  process.stderr.write(`workers must be 2 to the ${cores} cores here\n`);
  process.exit(2);
}
const dir = await mkdtemp(join(tmpdir(), 'plateau-scale-'));
const script = join(dir, 'car.js');
await writeConstantRateScript(script);

/** Cores `first`..`last` as taskset takes them. */
const span = (first: number, last: number) => (first === last ? `${first}` : `${first}-${last}`);

/** Where the target runs beside `count` workers on cores 0..count-1. */
function targetCores(count: number): string {
  if (process.env.BENCH_TARGET_CORES) return process.env.BENCH_TARGET_CORES;
  return count < cores ? span(count, cores - 1) : span(0, cores - 1);
}

/** `plateau engine run --workers count` at `totalRate` on cores 0..count-1. */
async function engineRun(count: number, url: string, totalRate: number) {
  const exported = join(dir, `summary-${count}.json`);
  const run = await measuredTree(
    span(0, count - 1),
    process.execPath,
    engineRunArgs(
      script,
      { csv: join(dir, `out-${count}.csv.gz`), summary: exported },
      { RATE: totalRate, DURATION: `${seconds}s`, TARGET: url, VUS: Math.max(10, totalRate / 50) },
      ['--workers', String(count)],
    ),
  );
  if (run.code !== 0) throw new Error(`--workers ${count} exited ${run.code}`);
  const summary = JSON.parse(await readFile(exported, 'utf8'));
  return {
    dropped: (summary.metrics.dropped_iterations?.count as number) ?? 0,
    // The coordinator first, then its workers by pid (the order they started).
    cpuMs: run.cpuUs.map((us) => Math.round(us / 1000)),
  };
}

const results: Record<string, unknown>[] = [];
try {
  for (const count of [1, workers]) {
    const totalRate = rate * count;
    const target = await startTarget(targetCores(count));
    try {
      await warmTarget(target.url, span(0, cores - 1));
      const run = await engineRun(count, target.url, totalRate);
      const seen = await stats(target.url, totalRate, totalRate * seconds);
      results.push({ workers: count, rate: totalRate, targetCores: targetCores(count), ...seen, ...run });
    } finally {
      target.child.kill();
    }
  }
  process.stdout.write(`${JSON.stringify({ seconds, cores, node: process.version, results }, null, 2)}\n`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
