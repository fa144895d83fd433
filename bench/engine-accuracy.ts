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
//   node --import tsx bench/engine-accuracy.ts [rates=1000,5000,10000,15000] [seconds=10]
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engineNodeFlags } from '../engine/node-flags.ts';

/** Engine runs this short are subtracted to get the marginal CPU per request. */
const SHORT_SECONDS = 2;

const rates = (process.argv[2] ?? '1000,5000,10000,15000').split(',').map(Number);
const seconds = Number(process.argv[3] ?? 10);
const CLK_TCK = 100;
const root = fileURLToPath(new URL('..', import.meta.url));

function cpuUs(pid: number): number {
  try {
    const fields = (require_('fs') as typeof import('node:fs'))
      .readFileSync(`/proc/${pid}/stat`, 'utf8')
      .split(') ')[1]!
      .split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / CLK_TCK) * 1e6;
  } catch {
    return 0;
  }
}
function require_(name: string): unknown {
  return process.getBuiltinModule ? process.getBuiltinModule(name) : undefined;
}

/** Runs `command` pinned to `core`, sampling its CPU until it exits. */
async function measured(
  core: number,
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

async function startTarget(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn('taskset', ['-c', '1', process.execPath, join(root, 'bench/lib/target-server.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve) =>
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())),
  );
  return { child, url: `http://127.0.0.1:${port}` };
}

/** Arrival statistics at the target; "steady" leaves out the first second (JIT, connections). */
async function stats(url: string, rate: number, planned: number) {
  const body = (await (await fetch(`${url}/__stats`)).json()) as {
    count: number;
    times: number[];
    planned: number[];
  };
  const { count, times } = body;
  await fetch(`${url}/__reset`);
  if (count === 0) return { received: 0, achievedPct: 0 };
  const origin = times[0]!;
  const steady = times.filter((t) => t - origin >= 1000);
  // Lag against the schedule: arrival of iteration i is due at t0 + i/rate. When the
  // generator says which iteration it sent (?i=), that is exact even across drops; t0 is
  // estimated as the earliest (arrival − i/rate).
  const index = body.planned.every((p) => p >= 0) ? body.planned : times.map((_, i) => i);
  const offsets = times.map((t, k) => t - (index[k]! * 1000) / rate);
  const t0 = offsets.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
  const sortedLags = offsets
    .filter((_, k) => times[k]! - origin >= 1000)
    .map((o) => o - t0)
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
    achievedPct: Math.round((count / planned) * 10000) / 100,
    steadyAchievedPct: Math.round((steady.length / steadyPlanned) * 10000) / 100,
    steadyLagP50Ms: Math.round(lagAt(0.5) * 100) / 100,
    steadyLagP99Ms: Math.round(lagAt(0.99) * 100) / 100,
    steadyCv10ms: Math.round((sd / mean) * 100) / 100,
  };
}

const target = await startTarget();
const dir = await mkdtemp(join(tmpdir(), 'plateau-bench-'));
const script = join(dir, 'car.js');
await writeFile(
  script,
  `import http from 'k6/http';
export const options = { scenarios: { car: { executor: 'constant-arrival-rate', rate: Number(__ENV.RATE),
  duration: __ENV.DURATION, preAllocatedVUs: Number(__ENV.VUS), maxVUs: Number(__ENV.VUS) * 4 } } };
import exec from 'k6/execution';
export default async function () { await http.asyncRequest('GET', __ENV.TARGET + '/?i=' + exec.scenario.iterationInTest); }`,
);
const results: Record<string, unknown>[] = [];

/** One engine run at `rate` for `runSeconds`: its CPU, the target's view, and drops. */
async function engineRun(rate: number, runSeconds: number) {
  const exported = join(dir, `summary-${rate}-${runSeconds}.json`);
  const engine = await measured(0, process.execPath, [
    ...engineNodeFlags(),
    join(root, 'bin/plateau.js'),
    'engine',
    'run',
    script,
    '-q',
    '--out',
    `csv=${join(dir, `out-${rate}-${runSeconds}.csv.gz`)}`,
    '--summary-export',
    exported,
    '-e',
    `RATE=${rate}`,
    '-e',
    `DURATION=${runSeconds}s`,
    '-e',
    `TARGET=${target.url}`,
    '-e',
    `VUS=${Math.max(10, rate / 50)}`,
  ]);
  const summary = JSON.parse(await readFile(exported, 'utf8'));
  const seen = await stats(target.url, rate, rate * runSeconds);
  return { cpuUs: engine.cpuUs, seen, dropped: summary.metrics.dropped_iterations?.count ?? 0 };
}

try {
  // A real service is warm when it is measured: give the target a second of traffic.
  await measured(0, process.execPath, [
    join(root, 'node_modules/autocannon/autocannon.js'),
    '-d',
    '1',
    '-c',
    '50',
    `${target.url}/`,
  ]);
  await fetch(`${target.url}/__reset`);
  for (const rate of rates) {
    const planned = rate * seconds;
    const short = await engineRun(rate, SHORT_SECONDS);
    const full = await engineRun(rate, seconds);
    results.push({
      generator: 'plateau engine',
      rate,
      ...full.seen,
      dropped: full.dropped,
      cpuUsPerRequest: Math.round(
        (full.cpuUs - short.cpuUs) / Math.max(1, full.seen.received - short.seen.received),
      ),
    });
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
    process.stderr.write(`${JSON.stringify(results.slice(-3))}\n`);
  }
  process.stdout.write(`${JSON.stringify({ seconds, node: process.version, results }, null, 2)}\n`);
} finally {
  target.child.kill();
  await rm(dir, { recursive: true, force: true });
}
