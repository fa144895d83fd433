// examples/orders-service: a service of the user's own (not the reference one), instrumented
// with plateau's library, studied end to end with its own POST: the study reads its /steps
// and names its pool.
// test-run: load
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { AnalysisResult } from '../contract/index.ts';
import { startOrdersService } from '../examples/orders-service/server.ts';
import { type Database, openDatabase } from '../harness/db/database.ts';
import { plateau } from './helpers/cli.ts';

const outDir = await mkdtemp(join(tmpdir(), 'plateau-example-'));
let db: Database | undefined;
before(async () => {
  db = await openDatabase({ databaseUrl: process.env.PLATEAU_TEST_DATABASE_URL });
});
after(async () => {
  await db?.stop();
});

test('the example orders service, studied with its own POST, is limited by its pool', async () => {
  // 2 connections × 1000 / 25 ms ≈ 80 orders/s at most: 160/s is past it.
  const service = await startOrdersService({
    databaseUrl: db!.url,
    poolMax: 2,
    workMs: 25,
    acquireTimeoutMs: 300,
    log: () => undefined,
  });
  after(() => service.close());
  const result = await plateau([
    'run',
    ...['--target', service.url, '--endpoint', '/orders', '--method', 'POST'],
    ...[
      '--body',
      '{"sku":"a1","qty":1}',
      '--header',
      'Content-Type: application/json',
      '--expect-status',
      '201',
    ],
    ...['--steps', '20,160', '--hold', '4', '--ramp', '1', '--recovery', '3', '--json', '--out', outDir],
  ]);
  assert.equal(result.code, 0, result.stderr);
  const analysis = JSON.parse(result.stdout) as AnalysisResult & { runDir: string };
  const low = analysis.table.find((row) => row.step === 'r020')!;
  const high = analysis.table.find((row) => row.step === 'r160')!;
  assert.equal(low.servedSource, 'server', "the study read the example's /steps");
  assert.ok(low.failureRate < 0.01, `r020 failed ${low.failureRate}`);
  assert.ok(low.servedPerSec > 15, `r020 served ${low.servedPerSec}/s: its 201s are successes`);
  assert.ok(
    high.servedPerSec > 30 && high.servedPerSec < 120,
    `r160 served ${high.servedPerSec}/s: the pool caps it`,
  );
  assert.equal(analysis.verdict.firstLimit.resource, 'pool', analysis.verdict.firstLimit.summary);
  const record = await readFile(join(analysis.runDir, 'record.txt'), 'utf8');
  assert.match(record, /workload: +POST \/orders, a 20-character body, headers Content-Type, 201 expected/);
  assert.match(record, /service: +http:\/\/127\.0\.0\.1:\d+ \(your service; its own settings\)/);
});
