// pgbouncer (Debian) in front of a real PostgreSQL with a pool of 2: its exporter shows the
// pool full with clients waiting, and PostgreSQL itself never sees more than the pool.
// Needs pgbouncer and prometheus-pgbouncer-exporter (.ci/run installs them); without them
// every test here is skipped with one line saying why, never counted as passed.
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { request } from 'undici';
import type { MeterScrape } from '../contract/index.ts';
import { type Database, openDatabase } from '../harness/db/database.ts';
import { MeterLog } from '../harness/sources/meter-source.ts';
import { PG_METERS, PostgresActivitySource } from '../harness/sources/postgres-activity.ts';
import {
  type Pgbouncer,
  type PgbouncerExporter,
  pgbouncerAvailable,
  startPgbouncer,
  startPgbouncerExporter,
} from './helpers/pgbouncer.ts';

const missing = pgbouncerAvailable();
const skip = missing ? `pgbouncer suite not run: ${missing}` : false;
if (skip) process.stdout.write(`# ${skip}\n`);

const POOL_SIZE = 2;
const CLIENTS = 6;
/** Between two polls of the exporter or the admin console: a few readings a second, not a load. */
const POLL_MS = 50;

let db: Database;
let dir: string;
let pgbouncer: Pgbouncer;
let exporter: PgbouncerExporter;

before(async () => {
  if (skip) return;
  db = await openDatabase({});
  dir = await mkdtemp(join(tmpdir(), 'plateau-pgbouncer-test-'));
  pgbouncer = await startPgbouncer({ databaseUrl: db.url, poolSize: POOL_SIZE });
  exporter = await startPgbouncerExporter({ pgbouncer });
});
after(async () => {
  await exporter?.stop();
  await pgbouncer?.stop();
  await db?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** One /metrics answer as `name{labels}` → value (the exporter writes one sample a line). */
async function scrapeExporter(): Promise<Map<string, number>> {
  const { statusCode, body } = await request(exporter.metricsUrl);
  const text = await body.text();
  assert.equal(statusCode, 200, text);
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return values;
}

/** A real MeterLog that keeps the scrapes and announces each. */
class WatchedLog extends MeterLog {
  readonly scrapes: MeterScrape[] = [];
  readonly events = new EventEmitter();
  override append(scrape: MeterScrape): void {
    super.append(scrape);
    this.scrapes.push(scrape);
    this.events.emit('scrape', scrape);
  }
}

const gauge = (scrape: MeterScrape, name: string, labels: Record<string, string> = {}) =>
  scrape.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    ?.value;

test(`a pool of ${POOL_SIZE} under ${CLIENTS} clients: full, with clients waiting, and PostgreSQL sees only the pool`, {
  skip,
}, async () => {
  const log = new WatchedLog(join(dir, 'meters.ndjson'));
  const activity = new PostgresActivitySource({ url: db.url, log });
  activity.start();

  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      const client = new pg.Client({ connectionString: pgbouncer.url });
      await client.connect();
      return client;
    }),
  );
  // Each client sleeps half a second again and again until the figures are seen: six
  // callers on two server connections keep about four waiting at every moment.
  let running = true;
  const loops = clients.map(async (client) => {
    while (running) await client.query('SELECT pg_sleep(0.5)');
  });
  const pool = { database: pgbouncer.database, user: pgbouncer.user };
  const labels = `{database="${pool.database}",user="${pool.user}"}`;
  try {
    // The exporter: poll until one reading shows the pool full with callers waiting (bounded).
    // Debian's exporter has no per-pool server counts: with every client busy, a pool's
    // active clients are those linked to a server connection, and used_servers counts the
    // server connections pgbouncer holds (all pools; the admin console holds none).
    const deadline = Date.now() + 15_000;
    const readings: Map<string, number>[] = [];
    const full = (m: Map<string, number>) =>
      m.get(`pgbouncer_active_clients${labels}`) === POOL_SIZE &&
      (m.get(`pgbouncer_waiting_clients${labels}`) ?? 0) >= 1 &&
      m.get('pgbouncer_used_servers') === POOL_SIZE;
    while (Date.now() < deadline && !readings.some(full)) {
      readings.push(await scrapeExporter());
      await delay(POLL_MS);
    }
    const seen = readings.find(full);
    assert.ok(
      seen,
      `the exporter never showed the pool full with clients waiting:\n${exporter.logTail().join('\n')}`,
    );
    assert.equal(seen.get(`pgbouncer_pool_size{database="${pool.database}"}`), POOL_SIZE);
    assert.ok(
      readings.every((m) => (m.get('pgbouncer_used_servers') ?? 0) <= POOL_SIZE),
      'never more server connections than the pool size',
    );

    // pgbouncer's own view agrees that both server connections are running queries.
    const admin = new pg.Client({ connectionString: pgbouncer.adminUrl });
    await admin.connect();
    try {
      let full = false;
      while (!full && Date.now() < deadline) {
        // The admin console speaks only the simple query protocol: no parameters.
        const { rows } = await admin.query('SHOW POOLS');
        const row = rows.find((r) => r.database === pool.database && r.user === pool.user);
        full = Number(row?.sv_active) === POOL_SIZE && Number(row?.cl_waiting) >= 1;
        if (!full) await delay(POLL_MS);
      }
      assert.ok(full, 'SHOW POOLS never showed both server connections active with clients waiting');
    } finally {
      await admin.end();
    }

    // PostgreSQL itself: a reading with both of pgbouncer's connections running a query.
    const both = (s: MeterScrape) => gauge(s, PG_METERS.backends, { state: 'active' }) === POOL_SIZE;
    if (!log.scrapes.some(both)) {
      const signal = AbortSignal.timeout(10_000);
      for (;;) {
        const [scrape] = (await once(log.events, 'scrape', { signal })) as [MeterScrape];
        if (both(scrape)) break;
      }
    }
  } finally {
    running = false;
    await Promise.all(loops);
    await Promise.all(clients.map((c) => c.end()));
  }
  const status = await activity.stop();
  await log.close();
  assert.equal(status.failures, 0, String(status.lastError));
  const inUse = log.scrapes.map((s) => gauge(s, PG_METERS.connectionsInUse)!);
  assert.ok(inUse.length >= 1);
  assert.ok(Math.max(...inUse) <= POOL_SIZE, `client backends per reading: ${inUse.join(' ')}`);
});
