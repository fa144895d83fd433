// "Any service" when the CPU is the limit: the JVM service (examples/jvm-service) spends 40 ms
// of CPU per request on the one core it may use, and its own meters name the CPU. It runs with
// nothing beside it: another test's work on that core would take the CPU the verdict measures.
// test-run: solo
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Database, openDatabase } from '../harness/db/database.ts';
import { jvmAvailable } from './helpers/jvm-service.ts';
import { studyJvm } from './helpers/jvm-study.ts';

const missing = jvmAvailable();
if (missing) console.log(`# jvm-cpu-limit suite not run: ${missing}`);

const outDir = await mkdtemp(join(tmpdir(), 'plateau-jvm-cpu-'));
let db: Database | undefined;
before(async () => {
  if (!missing) db = await openDatabase({ databaseUrl: process.env.PLATEAU_TEST_DATABASE_URL });
});
after(async () => {
  await db?.stop();
});

test('the CPU: 40 ms of CPU per request on the one core the JVM may use', {
  skip: missing ?? false,
}, async () => {
  // 1 core ÷ 0.04 s = 25/s at most; 8 threads and 8 connections of 5 ms would serve far more.
  // The JVM gets core 1 and plateau (the generator with it) core 0, so the JVM's CPU is its own.
  const { analysis, record } = await studyJvm(
    db!.url,
    outDir,
    { POOL_MAX: 8, THREADS: 8, QUERY_MS: 5, CPU_MS: 40 },
    '8,16,40',
    { cpus: '1', prefix: ['taskset', '-c', '0'] },
  );
  const v = analysis.verdict;
  assert.equal(v.firstLimit.resource, 'cpu', `${v.firstLimit.summary}\n${record}`);
  assert.equal(v.firstLimit.name, 'process cpu');
  assert.ok(v.plateau!.servedPerSec > 15 && v.plateau!.servedPerSec < 28, record);
  assert.equal(v.scaling?.cpuAutoscaler, null, 'a CPU limit needs no autoscaler warning');
});
