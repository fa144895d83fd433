// "Any service", read where nightly environments keep its meters: a real Prometheus server
// holding the JVM service's meters beside another service's (read through --prometheus and
// --prometheus-match alone), and pgbouncer's pool_size as the limit behind a HikariCP pool
// that is full only because its connections wait on pgbouncer (read from both --metrics).
// test-run: load
import assert from 'node:assert/strict';
import { on } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { AnalysisResult, MeterScrape, ResourcesReport, RunManifest } from '../contract/index.ts';
import { type Database, openDatabase } from '../harness/db/database.ts';
import { plateau } from './helpers/cli.ts';
import { type JvmService, jvmAvailable, startJvmService } from './helpers/jvm-service.ts';
import {
  type PgbouncerExporter,
  pgbouncerAvailable,
  startPgbouncer,
  startPgbouncerExporter,
} from './helpers/pgbouncer.ts';
import {
  type PrometheusServer,
  prometheusAvailable,
  startPrometheusServer,
} from './helpers/prometheus-server.ts';

const missingJvm = jvmAvailable();
const skipPrometheus = missingJvm ?? prometheusAvailable();
const skipPgbouncer = missingJvm ?? pgbouncerAvailable();
if (skipPrometheus) console.log(`# prometheus-server study not run: ${skipPrometheus}`);
if (skipPgbouncer) console.log(`# pgbouncer study not run: ${skipPgbouncer}`);

const outDir = await mkdtemp(join(tmpdir(), 'plateau-prometheus-and-pgbouncer-'));
let db: Database | undefined;
before(async () => {
  if (!skipPrometheus || !skipPgbouncer)
    db = await openDatabase({ databaseUrl: process.env.PLATEAU_TEST_DATABASE_URL });
});
after(async () => {
  await db?.stop();
});

/** What a study left: the analysis printed with --json, the record, run.json and resources.json. */
interface Studied {
  analysis: AnalysisResult & { runDir: string };
  record: string;
  manifest: RunManifest;
  resources: ResourcesReport;
}

/** `plateau run` against the service's /orders with `meters` as its only server side (4 s holds). */
async function study(service: JvmService, meters: string[], steps: string): Promise<Studied> {
  const result = await plateau([
    'run',
    ...['--target', service.ordersUrl, ...meters],
    ...['--steps', steps, '--hold', '4', '--ramp', '1', '--recovery', '4', '--recovery-rate', '10'],
    ...['--no-postgres-activity', '--json', '--out', outDir],
  ]);
  assert.equal(result.code, 0, `${result.stderr}\n${service.log()}`);
  const analysis = JSON.parse(result.stdout) as Studied['analysis'];
  const read = (name: string) => readFile(join(analysis.runDir, name), 'utf8');
  return {
    analysis,
    record: await read('record.txt'),
    manifest: JSON.parse(await read('run.json')) as RunManifest,
    resources: JSON.parse(await read('resources.json')) as ResourcesReport,
  };
}

/**
 * Another service on the same Prometheus server: a HikariCP pool also called `orders`, full
 * all the time with 40 callers waiting, and a meter of its own. Read by mistake, it would be a
 * second "hikaricp pool orders" (named apart by its instance) full from the first step.
 */
const OTHER_SERVICE_METERS = [
  '# TYPE hikaricp_connections_active gauge',
  'hikaricp_connections_active{pool="orders"} 10',
  '# TYPE hikaricp_connections_max gauge',
  'hikaricp_connections_max{pool="orders"} 10',
  '# TYPE hikaricp_connections_pending gauge',
  'hikaricp_connections_pending{pool="orders"} 40',
  '# TYPE billing_invoices_total counter',
  'billing_invoices_total 12',
  '',
].join('\n');

/** Serves OTHER_SERVICE_METERS on 127.0.0.1 (port 0) at any path. */
async function startOtherService(): Promise<{ server: Server; target: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(OTHER_SERVICE_METERS);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, target: `127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Resolves once `server` has answered `times` more requests (Prometheus's scrapes); rejects after 15 s. */
async function requestsTo(server: Server, times: number): Promise<void> {
  let seen = 0;
  for await (const _ of on(server, 'request', { signal: AbortSignal.timeout(15_000) })) {
    if (++seen >= times) return;
  }
}

test('through a Prometheus server: the pool named from the job matched, the other job left out', {
  skip: skipPrometheus ?? false,
}, async () => {
  const service = await startJvmService({
    databaseUrl: db!.url,
    env: { POOL_MAX: 4, THREADS: 8, QUERY_MS: 50 },
  });
  let other: { server: Server; target: string } | undefined;
  let prometheus: PrometheusServer | undefined;
  try {
    other = await startOtherService();
    const target = new URL(service.url).host;
    prometheus = await startPrometheusServer({
      targets: [target],
      job: 'orders',
      metricsPath: '/actuator/prometheus',
      otherJobs: [{ job: 'billing', targets: [other.target] }],
    });
    // Both jobs are in the server's storage before the study's window opens.
    await Promise.all([prometheus.scraped(target, 2), requestsTo(other.server, 2)]);
    // 4 ÷ ~0.052 s ≈ 77/s, as when the service's endpoint is scraped directly.
    const { analysis, record, manifest, resources } = await study(
      service,
      ['--prometheus', prometheus.url, '--prometheus-match', '{job="orders"}'],
      '30,60,120',
    );
    const v = analysis.verdict;
    assert.equal(v.firstLimit.resource, 'pool', `${v.firstLimit.summary}\n${record}`);
    assert.equal(v.firstLimit.name, 'hikaricp pool orders', record);
    assert.ok(v.plateau!.servedPerSec > 50 && v.plateau!.servedPerSec < 90, record);

    // The Prometheus server was the one source, read without a failure.
    const source = `prometheus ${prometheus.url}`;
    const sources = manifest.meters!.sources;
    assert.deepEqual(
      sources.map((s) => [s.kind, s.source]),
      [['prometheus', source]],
    );
    assert.ok(sources[0]!.attempts >= 1 && sources[0]!.failures === 0, JSON.stringify(sources[0]));
    // The meters seen but not understood are the matched job's: the JVM's, not billing's.
    assert.ok(sources[0]!.unrecognised.includes('jvm_memory_used_bytes'), JSON.stringify(sources[0]));
    assert.ok(!sources[0]!.unrecognised.includes('billing_invoices_total'), JSON.stringify(sources[0]));

    // Every resource came from the server, and none from the other job.
    assert.ok(
      resources.resources.every((r) => r.source === source),
      resources.resources.map((r) => `${r.name}: ${r.source}`).join('; '),
    );
    assert.deepEqual(resources.resources.map((r) => `${r.name}: ${r.kind}`).sort(), [
      'executor http queue: queue',
      'executor http: slots',
      'hikaricp pool orders: slots',
      'process cpu: cpu',
    ]);
    assert.ok(!resources.resources.some((r) => r.id.includes(other!.target)), 'no resource of billing');
    const scrapes = (await readFile(join(analysis.runDir, 'meters.ndjson'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as MeterScrape);
    const jobs = new Set(scrapes.flatMap((s) => s.samples.map((sample) => sample.labels.job)));
    assert.deepEqual([...jobs], ['orders'], 'every sample read is of job orders');
  } finally {
    await prometheus?.stop();
    if (other) await new Promise((resolve) => other!.server.close(resolve));
    await service.stop();
  }
});

test("pgbouncer's pool_size: 2 server connections behind HikariCP's 8", {
  skip: skipPgbouncer ?? false,
}, async () => {
  const bouncer = await startPgbouncer({ databaseUrl: db!.url, poolSize: 2, poolMode: 'transaction' });
  let exporter: PgbouncerExporter | undefined;
  let service: JvmService | undefined;
  try {
    exporter = await startPgbouncerExporter({ pgbouncer: bouncer });
    // The JDBC driver names its statements on the server after 5 executions (prepareThreshold);
    // in transaction mode the next transaction may get another server connection, where that
    // name does not exist. 0 keeps every statement unnamed.
    service = await startJvmService({
      databaseUrl: `${bouncer.url}?prepareThreshold=0`,
      env: { POOL_MAX: 8, THREADS: 16, QUERY_MS: 50 },
    });
    // 2 ÷ ~0.052 s ≈ 38/s; HikariCP's 8 (8 ÷ 0.052 ≈ 150/s) fill only while they wait on pgbouncer.
    const { analysis, record, manifest } = await study(
      service,
      ['--metrics', service.metricsUrl, '--metrics', exporter.metricsUrl],
      '15,30,60',
    );
    const v = analysis.verdict;
    assert.equal(v.firstLimit.resource, 'pool', `${v.firstLimit.summary}\n${record}`);
    assert.equal(v.firstLimit.name, `pgbouncer pool ${bouncer.database}/${bouncer.user}`, record);
    assert.ok(v.plateau!.servedPerSec > 25 && v.plateau!.servedPerSec < 50, record);
    assert.ok(
      v.evidence.saturated.some((e) =>
        /^also full: hikaricp pool orders [\d.]+ of 8 connections in use/.test(e),
      ),
      `HikariCP is listed as also full: ${v.evidence.saturated.join('; ')}\n${record}`,
    );
    assert.deepEqual(
      manifest.meters!.sources.map((s) => s.source),
      [`metrics ${service.metricsUrl}`, `metrics ${exporter.metricsUrl}`],
    );
  } finally {
    await service?.stop();
    await exporter?.stop();
    await bouncer.stop();
  }
});
