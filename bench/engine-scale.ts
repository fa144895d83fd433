// Benchmark: does the engine scale by execution segments? One process at a rate, then two
// processes on the segments 0:1/2 and 1/2:1 of a test at twice that rate, each on a core of
// its own, against the same trivial target.
//
// On a 2-core machine the target cannot have a core of its own in the two-process case: it
// runs unpinned and takes its CPU from both generators (it is far cheaper than they are,
// see bench/lib/target-server.mjs). The one-process case pins the target to core 1 and
// the engine to core 0, as bench/engine-accuracy.ts does. Measured from the target's side
// as there: achieved, dropped, start lag p50/p99 (per process, against its own start), CV.
//
//   node --import tsx bench/engine-scale.ts [rate=5000] [seconds=10]
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  engineRunArgs,
  measured,
  startTarget,
  stats,
  warmTarget,
  writeConstantRateScript,
} from './lib/load-bench.ts';

const rate = Number(process.argv[2] ?? 5000);
const seconds = Number(process.argv[3] ?? 10);
const dir = await mkdtemp(join(tmpdir(), 'plateau-scale-'));
const script = join(dir, 'car.js');
await writeConstantRateScript(script);

/** One engine process on `core` running `segment` (or the whole test) at the test's `totalRate`. */
async function engineProcess(core: number, url: string, totalRate: number, source: number, segment?: string) {
  const exported = join(dir, `summary-${totalRate}-${source}.json`);
  const run = await measured(
    core,
    process.execPath,
    engineRunArgs(
      script,
      { csv: join(dir, `out-${totalRate}-${source}.csv.gz`), summary: exported },
      {
        RATE: totalRate,
        DURATION: `${seconds}s`,
        TARGET: url,
        VUS: Math.max(10, totalRate / 50),
        SOURCE: source,
      },
      segment ? ['--execution-segment', segment, '--execution-segment-sequence', '0,1/2,1'] : [],
    ),
  );
  const summary = JSON.parse(await readFile(exported, 'utf8'));
  return { cpuUs: run.cpuUs, dropped: (summary.metrics.dropped_iterations?.count as number) ?? 0 };
}

const results: Record<string, unknown>[] = [];
try {
  const pinned = await startTarget('1');
  try {
    await warmTarget(pinned.url, '0,1');
    const one = await engineProcess(0, pinned.url, rate, 0);
    const seen = await stats(pinned.url, rate, rate * seconds);
    results.push({ processes: 1, rate, ...seen, dropped: one.dropped, cpuMs: Math.round(one.cpuUs / 1000) });
  } finally {
    pinned.child.kill();
  }
  const shared = await startTarget('0,1');
  try {
    await warmTarget(shared.url, '0,1');
    const total = rate * 2;
    const [a, b] = await Promise.all([
      engineProcess(0, shared.url, total, 0, '0:1/2'),
      engineProcess(1, shared.url, total, 1, '1/2:1'),
    ]);
    const seen = await stats(shared.url, total, total * seconds);
    results.push({
      processes: 2,
      rate: total,
      ...seen,
      dropped: a.dropped + b.dropped,
      cpuMs: [Math.round(a.cpuUs / 1000), Math.round(b.cpuUs / 1000)],
    });
  } finally {
    shared.child.kill();
  }
  process.stdout.write(`${JSON.stringify({ seconds, node: process.version, results }, null, 2)}\n`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
