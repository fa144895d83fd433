// Benchmark: how a high arrival rate starts, reached at once or by a short ramp.
//
// A constant rate from zero at 10,000/s on one core drops a few hundred starts in its first
// ~100 ms: k6 gives every VU its own connections and hands starts to the VU that has waited
// longest, so each of the first preAllocatedVUs starts opens a connection, and in Node that
// costs more CPU than the 100 µs between starts (docs/engine.md, "How it keeps time"). This
// bench runs the same rate reached by ramps of different lengths (a 0 ms ramp is k6's
// instant jump: the cold constant start) and measures, at the target, every start against
// its planned time from the engine's own schedule function.
//
//   npm run bench:engine-ramp [-- RATE=10000 RAMPS_MS=0,250,1000 HOLD_S=9 RUNS=2]
//
// Target pinned to core 1, engine to core 0, gzipped CSV output on, as bench:engine.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rampingArrivalRateStarts } from '../engine/schedule/arrival-rate-schedule.ts';
import { ExecutionTuple } from '../engine/schedule/execution-segment.ts';
import { engineRunArgs, measured, startTarget, warmTarget } from './lib/load-bench.ts';

const rate = Number(process.argv[2] ?? 10_000);
const rampsMs = (process.argv[3] ?? '0,250,1000').split(',').map(Number);
const holdS = Number(process.argv[4] ?? 9);
const runs = Number(process.argv[5] ?? 2);
const vus = Math.max(10, rate / 50);

const SCRIPT = `import http from 'k6/http';
import exec from 'k6/execution';
export const options = { scenarios: { rar: { executor: 'ramping-arrival-rate', startRate: 0, timeUnit: '1s',
  stages: [{ duration: __ENV.RAMP, target: Number(__ENV.RATE) }, { duration: __ENV.HOLD, target: Number(__ENV.RATE) }],
  preAllocatedVUs: Number(__ENV.VUS), maxVUs: Number(__ENV.VUS) * 4 } } };
export default async function () {
  await http.asyncRequest('GET', __ENV.TARGET + '/?i=' + exec.scenario.iterationInTest);
}`;

/** Planned offsets (ms) by iterationInTest, from the engine's schedule function. */
function plan(rampMs: number): Float64Array {
  const stages = [
    { durationNs: rampMs * 1e6, target: rate },
    { durationNs: holdS * 1e9, target: rate },
  ];
  const starts = [
    ...rampingArrivalRateStarts({ startRate: 0, timeUnitNs: 1e9, stages }, ExecutionTuple.create()),
  ];
  const offsets = new Float64Array(starts.length);
  for (const start of starts) offsets[start.iterationInTest] = start.offsetNs / 1e6;
  return offsets;
}

const quantile = (sorted: number[], q: number) =>
  sorted.length ? Math.round(sorted[Math.floor(q * (sorted.length - 1))]! * 100) / 100 : Number.NaN;

const target = await startTarget();
const dir = await mkdtemp(join(tmpdir(), 'plateau-bench-'));
const script = join(dir, 'rar.js');
await writeFile(script, SCRIPT);
const results: Record<string, unknown>[] = [];
try {
  await warmTarget(target.url);
  for (let run = 0; run < runs; run++) {
    for (const rampMs of rampsMs) {
      const planned = plan(rampMs);
      const exported = join(dir, `summary-${rampMs}.json`);
      await measured(
        0,
        process.execPath,
        engineRunArgs(
          script,
          { csv: join(dir, `out-${rampMs}.csv.gz`), summary: exported },
          { RATE: rate, RAMP: `${rampMs}ms`, HOLD: `${holdS}s`, VUS: vus, TARGET: target.url },
        ),
      );
      const summary = JSON.parse(await readFile(exported, 'utf8'));
      const seen = (await (await fetch(`${target.url}/__stats`)).json()) as {
        count: number;
        times: number[];
        planned: number[];
        connections: number;
      };
      await fetch(`${target.url}/__reset`);
      // Lag: arrival minus planned offset, against the earliest such difference (t0).
      const offsets = seen.times.map((t, k) => t - planned[seen.planned[k]!]!);
      const t0 = offsets.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
      const lags = offsets.map((o) => o - t0);
      const all = [...lags].sort((a, b) => a - b);
      const afterRamp = lags
        .filter((_, k) => planned[seen.planned[k]!]! >= rampMs + 1000)
        .sort((a, b) => a - b);
      results.push({
        rate,
        rampMs,
        planned: planned.length,
        achievedPct: Math.round((seen.count / planned.length) * 10000) / 100,
        dropped: summary.metrics.dropped_iterations?.count ?? 0,
        lagP50Ms: quantile(all, 0.5),
        lagP99Ms: quantile(all, 0.99),
        lagMaxMs: quantile(all, 1),
        lagP99AfterRampMs: quantile(afterRamp, 0.99),
        connections: seen.connections,
      });
      process.stderr.write(`${JSON.stringify(results.at(-1))}\n`);
    }
  }
  process.stdout.write(`${JSON.stringify({ rate, holdS, vus, node: process.version, results }, null, 2)}\n`);
} finally {
  target.child.kill();
  await rm(dir, { recursive: true, force: true });
}
