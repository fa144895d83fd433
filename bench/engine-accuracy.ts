// Benchmark: the embedded engine's accuracy and cost at constant arrival rates, side by side
// with autocannon -R and wrk on the same trivial loopback target.
//
// The target runs pinned to core 1, each generator pinned to core 0. The target is warmed
// up first (one second of autocannon), as a real service would be. For each rate the
// engine runs a constant-arrival-rate script (gzipped CSV output on, as in a real study),
// started with the engine's own Node flags (engine/node-flags.ts). Measured:
// - achieved: requests the target received ÷ planned starts, and dropped iterations;
// - start lag p50/p99: arrival offset at the target minus the planned offset i/rate
//   (after the first second, which pays for opening connections);
// - evenness: coefficient of variation of arrivals per 10 ms window (paced ≈ 0.1, bursts ≥ 2);
// - cost: generator CPU µs per request, from /proc/<pid>/stat. For the engine it is the
//   marginal cost: the same rate is also run for 2 s, and the difference in CPU over the
//   difference in requests leaves out start-up, the warm-up rehearsal and the summary.
//
//   node --import tsx bench/engine-accuracy.ts [rates=1000,5000,10000,15000] [seconds=10] [forms=async]
//
// forms: `async` (await http.asyncRequest), `blocking` (k6's http.get, rewritten by the
// engine to be awaited), or `async,blocking` for both, interleaved rate by rate.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  engineRunArgs,
  measured,
  BENCH_ROOT as root,
  startTarget,
  stats,
  warmTarget,
  writeConstantRateScript,
} from './lib/load-bench.ts';

/** Engine runs this short are subtracted to get the marginal CPU per request. */
const SHORT_SECONDS = 2;

const rates = (process.argv[2] ?? '1000,5000,10000,15000').split(',').map(Number);
const seconds = Number(process.argv[3] ?? 10);
const forms = (process.argv[4] ?? 'async').split(',') as ('async' | 'blocking')[];
if (forms.some((form) => form !== 'async' && form !== 'blocking')) {
  throw new Error(`forms must be async, blocking or async,blocking, not ${process.argv[4]}`);
}
const target = await startTarget();
const dir = await mkdtemp(join(tmpdir(), 'plateau-bench-'));
const scripts = { async: join(dir, 'car-async.js'), blocking: join(dir, 'car-blocking.js') };
await writeConstantRateScript(scripts.async, 'async');
await writeConstantRateScript(scripts.blocking, 'blocking');
const results: Record<string, unknown>[] = [];

/** One engine run at `rate` for `runSeconds`: its CPU, the target's view, and drops. */
async function engineRun(rate: number, runSeconds: number, form: 'async' | 'blocking') {
  const exported = join(dir, `summary-${rate}-${runSeconds}.json`);
  const engine = await measured(
    0,
    process.execPath,
    engineRunArgs(
      scripts[form],
      { csv: join(dir, `out-${rate}-${runSeconds}.csv.gz`), summary: exported },
      { RATE: rate, DURATION: `${runSeconds}s`, TARGET: target.url, VUS: Math.max(10, rate / 50) },
    ),
  );
  const summary = JSON.parse(await readFile(exported, 'utf8'));
  const seen = await stats(target.url, rate, rate * runSeconds);
  return { cpuUs: engine.cpuUs, seen, dropped: summary.metrics.dropped_iterations?.count ?? 0 };
}

try {
  await warmTarget(target.url);
  for (const rate of rates) {
    const planned = rate * seconds;
    for (const form of forms) {
      const short = await engineRun(rate, SHORT_SECONDS, form);
      const full = await engineRun(rate, seconds, form);
      results.push({
        generator: form === 'async' ? 'plateau engine' : 'plateau engine (blocking http.get)',
        rate,
        ...full.seen,
        dropped: full.dropped,
        cpuUsPerRequest: Math.round(
          (full.cpuUs - short.cpuUs) / Math.max(1, full.seen.received - short.seen.received),
        ),
      });
    }
    const cannon = await measured(0, process.execPath, [
      join(root, 'node_modules/autocannon/autocannon.js'),
      '-R',
      String(rate),
      '-d',
      String(seconds),
      '-c',
      String(Math.max(10, rate / 50)),
      '--json',
      `${target.url}/`,
    ]);
    const cannonStats = await stats(target.url, rate, planned);
    results.push({
      generator: 'autocannon -R',
      rate,
      ...cannonStats,
      cpuUsPerRequest: Math.round(cannon.cpuUs / Math.max(1, cannonStats.received)),
    });
    const wrk = await measured(0, 'wrk', [
      '-t1',
      '-c',
      String(Math.max(10, rate / 50)),
      '-d',
      `${seconds}s`,
      `${target.url}/`,
    ]).catch(() => undefined);
    if (wrk) {
      const wrkStats = await stats(target.url, rate, planned);
      results.push({
        generator: 'wrk (closed loop, max rate)',
        rate: Math.round(wrkStats.received / seconds),
        received: wrkStats.received,
        cpuUsPerRequest: Math.round(wrk.cpuUs / Math.max(1, wrkStats.received)),
      });
    }
    process.stderr.write(`${JSON.stringify(results.slice(-(forms.length + 2)))}\n`);
  }
  process.stdout.write(`${JSON.stringify({ seconds, node: process.version, results }, null, 2)}\n`);
} finally {
  target.child.kill();
  await rm(dir, { recursive: true, force: true });
}
