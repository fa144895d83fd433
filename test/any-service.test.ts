// "Any service": a JVM service plateau did not write (the JDK's HTTP server on a thread pool,
// HikariCP in front of PostgreSQL, Micrometer's meter names at /actuator/prometheus), studied
// with --metrics alone. The first limit is named by the service's own meters, and named right
// whether it is the pool or the request threads (fewer than connections); the CPU's case,
// which needs the machine to itself, is test/jvm-cpu-limit.test.ts.
// test-run: load
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ResourcesReport, RunManifest } from '../contract/index.ts';
import { type Database, openDatabase } from '../harness/db/database.ts';
import { jvmAvailable } from './helpers/jvm-service.ts';
import { studyJvm } from './helpers/jvm-study.ts';

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

const study = (env: Record<string, string | number>, steps: string) => studyJvm(db!.url, outDir, env, steps);

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
  // Once-a-second readings of "in use" average below 4 when the machine's CPU is saturated
  // (a released connection waits for its next caller to be scheduled): 3.8 of 4 in one CI run.
  // With callers waiting, the rule counts three quarters as full.
  const inUse = /^evidence: +hikaricp pool orders ([\d.]+) of 4 connections in use/m.exec(record);
  assert.ok(inUse && Number(inUse[1]) >= 3, record);
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
