// "Any service": a JVM service plateau did not write (the JDK's HTTP server on a thread pool,
// HikariCP in front of PostgreSQL, Micrometer's meter names at /actuator/prometheus), studied
// with --metrics alone. The first limit is named by the service's own meters, and named right
// whether it is the pool, the request threads (fewer than connections) or the CPU.
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { AnalysisResult, ResourcesReport, RunManifest } from '../contract/index.ts';
import { type Database, openDatabase } from '../harness/db/database.ts';
import { plateau } from './helpers/cli.ts';
import { jvmAvailable, startJvmService } from './helpers/jvm-service.ts';

const missing = jvmAvailable();
if (missing) console.log(`# any-service suite not run: ${missing}`);

const outDir = await mkdtemp(join(tmpdir(), 'plateau-any-service-'));
let db: Database | undefined;
before(async () => {
  if (!missing) db = await openDatabase({ databaseUrl: process.env.PLATEAU_TEST_DATABASE_URL });
});
after(async () => {
  await db?.stop();
});

/** Studies the JVM service with `env` at `steps` (4 s holds), reading only its published meters. */
async function study(
  env: Record<string, string | number>,
  steps: string,
  options: { cpus?: string; prefix?: string[] } = {},
): Promise<{ analysis: AnalysisResult & { runDir: string }; record: string }> {
  const service = await startJvmService({ databaseUrl: db!.url, env, cpus: options.cpus });
  try {
    const result = await plateau(
      [
        'run',
        ...['--target', service.ordersUrl, '--metrics', service.metricsUrl],
        ...['--steps', steps, '--hold', '4', '--ramp', '1', '--recovery', '4', '--recovery-rate', '10'],
        ...['--no-postgres-activity', '--json', '--out', outDir],
      ],
      { prefix: options.prefix },
    );
    assert.equal(result.code, 0, `${result.stderr}\n${service.log()}`);
    const analysis = JSON.parse(result.stdout) as AnalysisResult & { runDir: string };
    return { analysis, record: await readFile(join(analysis.runDir, 'record.txt'), 'utf8') };
  } finally {
    await service.stop();
  }
}

test('the pool: 4 HikariCP connections of 50 ms behind 8 request threads', {
  skip: missing ?? false,
}, async () => {
  // 4 ÷ ~0.052 s ≈ 77/s; the threads (8 ÷ 0.052 ≈ 150/s) fill only because they wait for connections.
  const { analysis, record } = await study({ POOL_MAX: 4, THREADS: 8, QUERY_MS: 50 }, '30,60,120');
  const v = analysis.verdict;
  assert.equal(v.firstLimit.resource, 'pool', `${v.firstLimit.summary}\n${record}`);
  assert.equal(v.firstLimit.name, 'hikaricp pool orders');
  assert.ok(v.plateau!.servedPerSec > 50 && v.plateau!.servedPerSec < 90, record);
  assert.match(record, /^first limit: +hikaricp pool orders, \d/m);
  assert.match(record, /^evidence: +hikaricp pool orders 4 of 4 connections in use/m);
  assert.match(record, /^predicted: +hikaricp pool orders \d+(\.\d)?\/s, /m);
  assert.match(record, /^scale on: +hikaricp pool orders: its waiting callers/m);
  // The run directory keeps what was read and how each source fared.
  const manifest = JSON.parse(await readFile(join(analysis.runDir, 'run.json'), 'utf8')) as RunManifest;
  const source = manifest.meters!.sources[0]!;
  assert.match(source.source, /^metrics http:\/\/127\.0\.0\.1:\d+\/actuator\/prometheus$/);
  assert.ok(source.attempts >= 10 && source.failures === 0, JSON.stringify(source));
  assert.ok(
    source.unrecognised.includes('jvm_memory_used_bytes'),
    'meters seen but not understood are listed',
  );
  const resources = JSON.parse(
    await readFile(join(analysis.runDir, 'resources.json'), 'utf8'),
  ) as ResourcesReport;
  assert.deepEqual(resources.resources.map((r) => `${r.name}: ${r.kind}`).sort(), [
    'executor http queue: queue',
    'executor http: slots',
    'hikaricp pool orders: slots',
    'process cpu: cpu',
  ]);
});

test('the request threads: 2 threads in front of 4 connections', { skip: missing ?? false }, async () => {
  // 2 ÷ ~0.052 s ≈ 38/s; the pool is half used and nobody waits for it.
  const { analysis, record } = await study({ POOL_MAX: 4, THREADS: 2, QUERY_MS: 50 }, '15,30,60');
  const v = analysis.verdict;
  assert.equal(v.firstLimit.resource, 'threads', `${v.firstLimit.summary}\n${record}`);
  assert.equal(v.firstLimit.name, 'executor http');
  assert.ok(v.plateau!.servedPerSec > 25 && v.plateau!.servedPerSec < 45, record);
  assert.ok(
    v.evidence.flat.some((f) => f.startsWith('hikaricp pool orders')),
    `the pool is listed flat: ${v.evidence.flat.join('; ')}`,
  );
});

test('the CPU: 40 ms of CPU per request on the one core the JVM may use', {
  skip: missing ?? false,
}, async () => {
  // 1 core ÷ 0.04 s = 25/s at most; 8 threads and 8 connections of 5 ms would serve far more.
  // The JVM gets core 1 and plateau (the generator with it) core 0, so the JVM's CPU is its own.
  const { analysis, record } = await study({ POOL_MAX: 8, THREADS: 8, QUERY_MS: 5, CPU_MS: 40 }, '8,16,40', {
    cpus: '1',
    prefix: ['taskset', '-c', '0'],
  });
  const v = analysis.verdict;
  assert.equal(v.firstLimit.resource, 'cpu', `${v.firstLimit.summary}\n${record}`);
  assert.equal(v.firstLimit.name, 'process cpu');
  assert.ok(v.plateau!.servedPerSec > 15 && v.plateau!.servedPerSec < 28, record);
  assert.equal(v.scaling?.cpuAutoscaler, null, 'a CPU limit needs no autoscaler warning');
});
