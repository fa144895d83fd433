// Benchmark: the load generator's memory over a long constant-arrival-rate run, the embedded
// engine beside real k6 on the same script (issue 27: a one-hour run at 10,000/s within
// 0.5 GB).
//
// The target (bench/lib/target-server.mjs, raw sockets, constant memory) runs pinned to
// core 1, each generator pinned to core 0, as in the other load benches. The generator runs
// as in a study: a gzipped CSV, a summary export, its REST API on a loopback port read once
// a second for the status and two counters (as plateau run reads it), a scenario tag and a
// threshold on a sub-metric, a check per request. The memory of the generator's process tree
// (the process and any children, from /proc/<pid>/smaps_rollup) is sampled once a second as
// its PSS: each process's resident pages, a page shared by several processes (the node
// binary's code, in each engine process) counted as its share, so that the sum is what the
// tree holds; a sum of RSS would count the shared pages once per process (it is printed too,
// as the peak). Printed, per generator: the rate it achieved, PSS one minute into the test (or
// at the settle point of a shorter run), at the end of the test, the peak, the growth per
// minute after that point (least squares over the samples) and that line carried on to one
// hour, and how many times the PSS fell by more than 20 MB and a tenth in a second (a full
// collection returning the old generation's garbage: the sawtooth whose trend the line is).
//
//   npm run bench:engine-memory -- [rate=5000] [seconds=600] [generators=engine,k6] [samples.csv]
//
// generators: engine, k6 and engine-workers (the engine on `--workers 2`, not pinned).
//
// With a fourth argument, every reading is also written there as CSV (generator, seconds
// since the test started, PSS MB, summed RSS MB), to plot where the memory went.
// Run it only under the machine's load lock: flock /tmp/plateau-load.lock npm run bench:engine-memory -- …
// k6 is K6_BIN, else ../shared/k6/k6 beside the checkout, else k6 on PATH; without one the
// k6 row says why it is missing.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort, LoadApiClient, STATUS_RUNNING } from '../harness/study/load-api.ts';
import { findRealK6 } from '../test/helpers/real-k6.ts';
import { engineRunArgs, k6RunArgs, startTarget } from './lib/load-bench.ts';

/**
 * `engine-workers` is the engine on two worker processes (`--workers 2`), not pinned: the way
 * docs/engine.md advises for an hour past 5,000/s. Its memory is the coordinator's and both
 * workers', as one process tree.
 */
const GENERATORS = ['engine', 'k6', 'engine-workers'] as const;
type Generator = (typeof GENERATORS)[number];

const rate = Number(process.argv[2] ?? 5000);
const seconds = Number(process.argv[3] ?? 600);
const generators = (process.argv[4] ?? 'engine,k6').split(',') as Generator[];
const samplesFile = process.argv[5];
if (!(rate > 0) || !(seconds > 0) || generators.some((g) => !GENERATORS.includes(g))) {
  process.stderr.write(
    'usage: npm run bench:engine-memory -- [rate=5000] [seconds=600] [generators=engine,k6]\n' +
      'rate and seconds are positive numbers; generators is a list of engine, k6 and engine-workers\n',
  );
  process.exit(2);
}
/** Where the growth line starts: a minute in, or halfway through a shorter run. */
const settleSeconds = Math.min(60, seconds / 2);
/** A run that has not ended this long after its planned end is killed. */
const OVERRUN_MS = 120_000;

/**
 * One reading: seconds since the test started (negative before), the tree's proportional set
 * (`pssMb`: the memory it holds, on which every figure is judged) and its summed resident sets.
 */
interface RssSample {
  atSeconds: number;
  pssMb: number;
  rssMb: number;
}

/**
 * The memory of `pid` and every process below it, in kB; undefined once `pid` is gone. `rss`
 * sums each process's resident set, so a page shared by several (the node binary's code,
 * mapped by every engine process) counts once per process; `pss` counts each shared page as a
 * share among the processes that map it, so the sum is the memory the tree holds (what a
 * cgroup's limit sees, give or take the page cache).
 */
function treeMemoryKb(pid: number): { rss: number; pss: number } | undefined {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces, so split after its ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  let total: { rss: number; pss: number } | undefined;
  const pending = [pid];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    try {
      const rollup = readFileSync(`/proc/${next}/smaps_rollup`, 'utf8');
      const rss = /^Rss:\s+(\d+) kB/m.exec(rollup)?.[1];
      const pss = /^Pss:\s+(\d+) kB/m.exec(rollup)?.[1];
      if (rss !== undefined && pss !== undefined) {
        total ??= { rss: 0, pss: 0 };
        total.rss += Number(rss);
        total.pss += Number(pss);
      }
    } catch {
      if (next === pid) return undefined;
    }
    pending.push(...(children.get(next) ?? []));
  }
  return total;
}

/** Slope of pssMb over atSeconds by least squares, MB per second; 0 with fewer than two samples. */
function slopeMbPerSecond(samples: readonly RssSample[]): number {
  if (samples.length < 2) return 0;
  const n = samples.length;
  const meanT = samples.reduce((sum, s) => sum + s.atSeconds, 0) / n;
  const meanR = samples.reduce((sum, s) => sum + s.pssMb, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const s of samples) {
    covariance += (s.atSeconds - meanT) * (s.pssMb - meanR);
    variance += (s.atSeconds - meanT) ** 2;
  }
  return variance === 0 ? 0 : covariance / variance;
}

/**
 * Where the RSS fell by more than 20 MB and a tenth from one reading to the next: a full
 * collection handing the old generation's garbage back (V8's sawtooth), not a test ending.
 */
function falls(samples: readonly RssSample[]): number[] {
  const at: number[] = [];
  for (let i = 1; i < samples.length; i++) {
    const drop = samples[i - 1]!.pssMb - samples[i]!.pssMb;
    if (drop > 20 && drop > samples[i - 1]!.pssMb / 10) at.push(i);
  }
  return at;
}

/**
 * The table's figures from one run's samples. The hour's projection is the straight line
 * through the settled readings; where the RSS falls (a full collection's sawtooth) the line
 * is its trend, and the peak is what the run reached.
 */
function rssFigures(samples: readonly RssSample[]) {
  const during = samples.filter((s) => s.atSeconds >= 0 && s.atSeconds <= seconds);
  const settled = during.filter((s) => s.atSeconds >= settleSeconds);
  const atSettle = settled[0]?.pssMb;
  const slope = slopeMbPerSecond(settled);
  return {
    atSettleMb: atSettle,
    endMb: during.at(-1)?.pssMb,
    peakMb: Math.max(...samples.map((s) => s.pssMb)),
    peakRssMb: Math.max(...samples.map((s) => s.rssMb)),
    growthMbPerMin: slope * 60,
    // The test's own end (its VUs and buffers let go) is not a collection's fall.
    falls: falls(settled.filter((s) => s.atSeconds <= seconds - 3)).length,
    hourMb: atSettle === undefined ? undefined : atSettle + slope * (3600 - settleSeconds),
  };
}

/** The same script for both generators, in the ES2017 that k6 v0.49 compiles. */
async function writeScript(path: string): Promise<void> {
  await writeFile(
    path,
    `import http from 'k6/http';
import { check } from 'k6';
export const options = {
  scenarios: { load: { executor: 'constant-arrival-rate', rate: Number(__ENV.RATE), timeUnit: '1s',
    duration: __ENV.DURATION, preAllocatedVUs: Number(__ENV.VUS), maxVUs: Number(__ENV.VUS) * 4,
    tags: { step: 'r1' } } },
  thresholds: { 'http_req_duration{step:r1}': ['p(95)<5000'], http_req_failed: ['rate<0.5'] },
};
export default async function () {
  const res = await http.asyncRequest('GET', __ENV.TARGET + '/');
  check(res, { 'status is 200': (r) => r.status === 200 });
}
`,
  );
}

/**
 * Runs `generator` pinned to core 0 (two workers: unpinned) and samples its RSS every second
 * until it exits.
 */
async function run(generator: Generator, k6Bin: string, dir: string, script: string, targetUrl: string) {
  const port = await freeLoopbackPort();
  const files = { csv: join(dir, `${generator}.csv.gz`), summary: join(dir, `${generator}-summary.json`) };
  const env = { RATE: rate, DURATION: `${seconds}s`, TARGET: targetUrl, VUS: Math.max(10, rate / 50) };
  const address = ['--address', `127.0.0.1:${port}`];
  const [command, args] =
    generator === 'k6'
      ? [k6Bin, k6RunArgs(script, files, env, address)]
      : [
          process.execPath,
          engineRunArgs(script, files, env, [
            ...address,
            ...(generator === 'engine-workers' ? ['--workers', '2'] : []),
          ]),
        ];
  // Two workers need both cores: they share core 1 with the target.
  const pinned =
    generator === 'engine-workers' ? [command, ...args] : ['taskset', '-c', '0', command, ...args];
  const child: ChildProcess = spawn(pinned[0]!, pinned.slice(1), {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, K6_NO_USAGE_REPORT: 'true' },
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const api = new LoadApiClient(`http://127.0.0.1:${port}`, () => performance.now());
  const spawnedMs = performance.now();
  let testStartMs: number | undefined;
  let httpReqs = 0;
  const samples: { atMs: number; pssMb: number; rssMb: number }[] = [];
  const sample = async () => {
    const kb = treeMemoryKb(child.pid!);
    const atMs = performance.now();
    if (kb !== undefined) samples.push({ atMs, pssMb: kb.pss / 1024, rssMb: kb.rss / 1024 });
    const counters = await api.read();
    if (counters && counters.status >= STATUS_RUNNING) {
      testStartMs ??= atMs;
      httpReqs = Math.max(httpReqs, counters.httpReqs);
    }
    const last = samples.at(-1);
    if (last && Math.round((atMs - spawnedMs) / 1000) % 30 === 0) {
      process.stderr.write(
        `${generator}: ${Math.round((atMs - (testStartMs ?? spawnedMs)) / 1000)} s, PSS ${Math.round(last.pssMb)} MB (RSS summed ${Math.round(last.rssMb)} MB), ${httpReqs} requests\n`,
      );
    }
  };
  const timer = setInterval(() => void sample(), 1000);
  const overrun = setTimeout(() => child.kill('SIGKILL'), seconds * 1000 + OVERRUN_MS);
  const code = await exited;
  clearInterval(timer);
  clearTimeout(overrun);
  if (code !== 0 && code !== 99) {
    throw new Error(`${generator} exited ${code}; its stderr ends with:\n${stderr}`);
  }
  const summary = JSON.parse(await readFile(files.summary, 'utf8')) as {
    metrics: Record<string, { count?: number }>;
  };
  const origin = testStartMs ?? spawnedMs;
  return {
    samples: samples.map((s) => ({ atSeconds: (s.atMs - origin) / 1000, pssMb: s.pssMb, rssMb: s.rssMb })),
    requests: summary.metrics.http_reqs?.count ?? 0,
    dropped: summary.metrics.dropped_iterations?.count ?? 0,
    startedFromApi: testStartMs !== undefined,
  };
}

const mb = (value: number | undefined) => (value === undefined ? '–' : `${Math.round(value)} MB`);

const k6 = findRealK6();
const dir = await mkdtemp(join(tmpdir(), 'plateau-bench-memory-'));
const script = join(dir, 'memory.js');
await writeScript(script);
const target = await startTarget('1');
const rows: string[] = [];
const readings = ['generator,seconds,pss_mb,rss_mb'];
try {
  for (const generator of generators) {
    if (generator === 'k6' && typeof k6 === 'string') {
      rows.push(`| k6 | ${rate} | (not run: ${k6}) | | | | | | | | |`);
      continue;
    }
    const name =
      generator === 'k6'
        ? (k6 as { version: string }).version.split(' (')[0]!
        : generator === 'engine'
          ? 'plateau engine'
          : 'plateau engine, 2 workers (unpinned)';
    const result = await run(generator, typeof k6 === 'string' ? '' : k6.bin, dir, script, target.url);
    const figures = rssFigures(result.samples);
    for (const s of result.samples)
      readings.push(`${generator},${s.atSeconds.toFixed(1)},${s.pssMb.toFixed(1)},${s.rssMb.toFixed(1)}`);
    if (!result.startedFromApi)
      process.stderr.write(`${generator}: the REST API never said running; times are from spawn\n`);
    rows.push(
      `| ${name} | ${rate} | ${Math.round(result.requests / seconds)} (${result.dropped} dropped) | ${seconds} s | ` +
        `${mb(figures.atSettleMb)} | ${mb(figures.endMb)} | ${mb(figures.peakMb)} | ` +
        `${figures.growthMbPerMin.toFixed(1)} MB | ${figures.falls} | ${mb(figures.hourMb)} | ${mb(figures.peakRssMb)} |`,
    );
    process.stderr.write(`${rows.at(-1)}\n`);
  }
  const at = settleSeconds === 60 ? '1 min' : `${settleSeconds} s`;
  process.stdout.write(
    `\n${new Date().toISOString().slice(0, 10)}, Node ${process.version}, generator on core 0, target on core 1\n\n` +
      `| generator | rate/s | achieved/s | duration | PSS at ${at} | at the end | peak | growth per min after ${at} | falls | projected at 1 h | peak, RSS summed |\n` +
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n' +
      `${rows.join('\n')}\n`,
  );
  if (samplesFile) await writeFile(samplesFile, `${readings.join('\n')}\n`);
} finally {
  target.child.kill();
  await rm(dir, { recursive: true, force: true });
}
