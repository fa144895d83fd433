// Benchmark: the embedded engine against real k6 at constant arrival rates, on one core each,
// against the same trivial loopback target, interleaved rate by rate.
//
// The target runs pinned to core 1, each generator pinned to core 0 (Go sizes its scheduler
// to that one core). The engine runs its async script; k6 runs its fastest form, the
// synchronous http.get. Both write a gzipped CSV and a summary export, as in a study.
// Measured from the target's side, as bench/engine-accuracy.ts does: achieved %, dropped
// iterations, start lag p50/p99 after the first second, evenness (CV of arrivals per 10 ms)
// and marginal CPU µs per request (a 2 s run of the same rate subtracted, which leaves out
// start-up, VU initialisation and the summary).
//
//   npm run bench:engine-vs-k6 -- [rates=1000,5000,10000] [seconds=10]
// k6 is K6_BIN, else ../shared/k6/k6 beside the checkout, else k6 on PATH.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vetK6Binary } from '../harness/study/k6-binary.ts';
import {
  BENCH_ROOT,
  engineRunArgs,
  k6RunArgs,
  measured,
  startTarget,
  stats,
  warmTarget,
  writeConstantRateScript,
} from './lib/load-bench.ts';

const SHORT_SECONDS = 2;
const rates = (process.argv[2] ?? '1000,5000,10000').split(',').map(Number);
const seconds = Number(process.argv[3] ?? 10);
const shared = join(BENCH_ROOT, '..', 'shared', 'k6', 'k6');
const k6 = vetK6Binary(process.env.K6_BIN ?? (existsSync(shared) ? shared : 'k6'));

const dir = await mkdtemp(join(tmpdir(), 'plateau-bench-vs-k6-'));
const engineScript = join(dir, 'engine.js');
await writeConstantRateScript(engineScript);
// k6's fastest script form: the synchronous http.get blocks its VU's goroutine, not a loop.
const k6Script = join(dir, 'k6.js');
await writeFile(
  k6Script,
  `import http from 'k6/http';
import exec from 'k6/execution';
export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: Number(__ENV.RATE),
  duration: __ENV.DURATION, preAllocatedVUs: Number(__ENV.VUS), maxVUs: Number(__ENV.VUS) * 4 } } };
export default function () {
  http.get(__ENV.TARGET + '/?i=' + exec.scenario.iterationInTest + '&s=0');
}`,
);

const target = await startTarget();

/** One run of `generator` at `rate` for `runSeconds`: CPU, the target's view, drops. */
async function run(generator: 'engine' | 'k6', rate: number, runSeconds: number) {
  const files = {
    csv: join(dir, `${generator}-${rate}-${runSeconds}.csv.gz`),
    summary: join(dir, 'summary.json'),
  };
  const env = { RATE: rate, DURATION: `${runSeconds}s`, TARGET: target.url, VUS: Math.max(10, rate / 50) };
  const result =
    generator === 'engine'
      ? await measured(0, process.execPath, engineRunArgs(engineScript, files, env))
      : await measured(0, k6.path, k6RunArgs(k6Script, files, env));
  const summary = JSON.parse(await readFile(files.summary, 'utf8'));
  const seen = await stats(target.url, rate, rate * runSeconds);
  return { cpuUs: result.cpuUs, seen, dropped: summary.metrics.dropped_iterations?.count ?? 0 };
}

const results: Record<string, unknown>[] = [];
try {
  await warmTarget(target.url);
  for (const rate of rates) {
    for (const generator of ['engine', 'k6'] as const) {
      const short = await run(generator, rate, SHORT_SECONDS);
      const full = await run(generator, rate, seconds);
      results.push({
        generator:
          generator === 'engine'
            ? 'plateau engine (async)'
            : `${k6.version.split(' ').slice(0, 2).join(' ')} (http.get)`,
        rate,
        achievedPct: full.seen.achievedPct,
        dropped: full.dropped,
        steadyLagP50Ms: full.seen.steadyLagP50Ms,
        steadyLagP99Ms: full.seen.steadyLagP99Ms,
        steadyCv10ms: full.seen.steadyCv10ms,
        cpuUsPerRequest: Math.round(
          (full.cpuUs - short.cpuUs) / Math.max(1, full.seen.received - short.seen.received),
        ),
      });
      process.stderr.write(`${JSON.stringify(results.at(-1))}\n`);
    }
  }
  process.stdout.write(
    `${JSON.stringify({ seconds, node: process.version, k6: k6.version, results }, null, 2)}\n`,
  );
} finally {
  target.child.kill();
  await rm(dir, { recursive: true, force: true });
}
