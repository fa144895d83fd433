// Benchmark: what reading a service's published meters once a second costs the service.
//
// The JVM example service (examples/jvm-service: HikariCP, 4 connections, 50 ms queries, 8
// request threads) and plateau's own reference service (prom-client's /metrics), each against
// one embedded PostgreSQL, offered a constant rate above its pool's ceiling for each round,
// while plateau's MetricsEndpointSource scrapes its metrics endpoint once a second, the
// PostgresActivitySource polls pg_stat_activity once a second, or nothing reads. Rounds
// alternate, and the queue is let drain between them. Served per second is what the service
// completed during the round after its first 5 s, from its own counter (HikariCP's
// acquisitions; the reference service's GET /steps timeline), read twice per round whatever
// the mode: if reading cost nothing, it would be the same in every mode.
//
//   npm run bench:metrics-scrape -- [service=jvm|reference] [rate=100] [roundSeconds=20] [rounds=1]
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { parsePrometheusText } from '../analysis/resources/prometheus-text.ts';
import { meterNamesRead } from '../analysis/resources/resource-series.ts';
import type { ServerStepReport } from '../contract/index.ts';
import { engineNodeFlags } from '../engine/node-flags.ts';
import { buildK6Scripts } from '../harness/build-scripts.ts';
import { openDatabase } from '../harness/db/database.ts';
import { MeterLog, type MeterSource } from '../harness/sources/meter-source.ts';
import { MetricsEndpointSource } from '../harness/sources/metrics-endpoint.ts';
import { PostgresActivitySource } from '../harness/sources/postgres-activity.ts';
import { startJvmService } from '../test/helpers/jvm-service.ts';
import { startReferenceService } from './lib/reference-service.ts';

const [serviceArg = 'jvm', ...numbers] = process.argv.slice(2);
const [rate = 100, roundSeconds = 20, rounds = 1] = numbers.map(Number);
if (serviceArg !== 'jvm' && serviceArg !== 'reference') {
  process.stderr.write(
    'usage: npm run bench:metrics-scrape -- [jvm|reference] [rate] [roundSeconds] [rounds]\n',
  );
  process.exit(2);
}
const bin = fileURLToPath(new URL('../bin/plateau.js', import.meta.url));
const MODES = ['metrics endpoint', 'pg_stat_activity', 'none'] as const;

const text = async (url: string, method = 'GET'): Promise<string> =>
  (await request(url, { method })).body.text();

/** A service under test: where to load it, what its meters are, and what it has completed so far. */
interface Studied {
  baseUrl: string;
  endpoint: string;
  metricsUrl: string;
  completed(): Promise<number>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL });
const dir = await mkdtemp(join(tmpdir(), 'plateau-bench-scrape-'));

async function startJvm(): Promise<Studied> {
  const jvm = await startJvmService({ databaseUrl: db.url, env: { POOL_MAX: 4, THREADS: 8, QUERY_MS: 50 } });
  return {
    baseUrl: jvm.url,
    endpoint: '/orders',
    metricsUrl: jvm.metricsUrl,
    // HikariCP's acquisitions: one per request served.
    completed: async () =>
      parsePrometheusText(await text(jvm.metricsUrl)).samples.find(
        (s) => s.name === 'hikaricp_connections_acquire_seconds_count',
      )?.value ?? 0,
    reset: async () => undefined,
    stop: () => jvm.stop(),
  };
}

async function startReference(): Promise<Studied> {
  const { child, url } = await startReferenceService(db.url, { SHED: 'off' });
  return {
    baseUrl: url,
    endpoint: '/statement',
    metricsUrl: `${url}/metrics`,
    completed: async () => {
      const report = JSON.parse(await text(`${url}/steps`)) as ServerStepReport;
      return report.timeline.reduce((sum, p) => sum + p.served, 0);
    },
    reset: async () => {
      await text(`${url}/steps/reset`, 'POST');
    },
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('exit', resolve));
    },
  };
}

const service = serviceArg === 'jvm' ? await startJvm() : await startReference();
const [script] = await buildK6Scripts({
  entries: [fileURLToPath(new URL('../scripts/constant-rate.ts', import.meta.url))],
});
const results: Record<string, unknown>[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    for (const mode of MODES) {
      await service.reset();
      const log = new MeterLog(join(dir, `${round}-${mode}.ndjson`));
      const names = meterNamesRead([]);
      const source: MeterSource | undefined =
        mode === 'metrics endpoint'
          ? new MetricsEndpointSource(service.metricsUrl, {
              log,
              keep: (name) => names.has(name),
            })
          : mode === 'pg_stat_activity'
            ? new PostgresActivitySource({ url: db.url, log })
            : undefined;
      source?.start();
      const engine = spawn(
        process.execPath,
        [
          ...engineNodeFlags(),
          bin,
          'engine',
          'run',
          script!.outFile,
          '-q',
          '--no-summary',
          ...['-e', `BASE_URL=${service.baseUrl}`, '-e', `ENDPOINT=${service.endpoint}`],
          ...['-e', `RATE=${rate}`, '-e', `DURATION=${roundSeconds}s`],
          ...['-e', `PREALLOCATED_VUS=${rate * roundSeconds}`, '-e', `MAX_VUS=${rate * roundSeconds}`],
        ],
        { stdio: 'ignore' },
      );
      const exited = new Promise((resolve) => engine.on('exit', resolve));
      // Served over the round after its first 5 s: the service's own completions.
      await new Promise((resolve) => setTimeout(resolve, 5000));
      const from = await service.completed();
      const fromMs = Date.now();
      await new Promise((resolve) => setTimeout(resolve, (roundSeconds - 6) * 1000));
      const to = await service.completed();
      const servedPerSec = Math.round(((to - from) / ((Date.now() - fromMs) / 1000)) * 10) / 10;
      const status = source ? await source.stop() : undefined;
      await log.close();
      await exited;
      results.push({
        service: serviceArg,
        reading: mode,
        rate,
        servedPerSec,
        readings: status?.attempts ?? 0,
        failures: status?.failures ?? 0,
        readMsMedian: status?.readMsMedian ?? null,
      });
      process.stderr.write(`${JSON.stringify(results.at(-1))}\n`);
      // Let the queue drain before the next round: nothing completes any more.
      let last = await service.completed();
      for (let i = 0; i < 120; i++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const now = await service.completed();
        if (now === last) break;
        last = now;
      }
    }
  }
  process.stdout.write(
    `${JSON.stringify({ service: serviceArg, rate, roundSeconds, node: process.version, results }, null, 2)}\n`,
  );
} finally {
  await service.stop();
  await db.stop();
  await rm(dir, { recursive: true, force: true });
}
