// PostgreSQL's view of a study against a real embedded PostgreSQL: backends by state and
// wait, slots in use, the CPU of the postmaster's tree, and a database that goes away.
// test-run: own-process (it looks for processes it left behind, by its PLATEAU_TEST_MARK)
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { MeterSample, MeterScrape } from '../../contract/index.ts';
import { waitFor } from '../../test/helpers/processes.ts';
import { type Database, openDatabase } from '../db/database.ts';
import { MeterLog, readMeterLog } from './meter-source.ts';
import { type ActivityRow, activitySamples, PG_METERS, PostgresActivitySource } from './postgres-activity.ts';

/** A real MeterLog that also tells the test about each scrape as it is appended. */
class WatchedLog extends MeterLog {
  readonly scrapes: MeterScrape[] = [];
  readonly events = new EventEmitter();
  override append(scrape: MeterScrape): void {
    super.append(scrape);
    this.scrapes.push(scrape);
    this.events.emit('scrape', scrape);
  }

  /** The first scrape from now on that satisfies `check`; rejects after `timeoutMs`. */
  async next(check: (scrape: MeterScrape) => boolean, timeoutMs: number): Promise<MeterScrape> {
    const signal = AbortSignal.timeout(timeoutMs);
    for (;;) {
      const [scrape] = (await once(this.events, 'scrape', { signal })) as [MeterScrape];
      if (check(scrape)) return scrape;
    }
  }
}

function value(scrape: MeterScrape, name: string, labels: Record<string, string> = {}): number | undefined {
  return scrape.samples.find(
    (s: MeterSample) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}

const row = (clients: ActivityRow['clients']): ActivityRow => ({
  self_pid: 1,
  max_connections: 100,
  superuser_reserved: 3,
  reserved: 2,
  clients,
});

describe('activitySamples', () => {
  const cases: {
    name: string;
    clients: ActivityRow['clients'];
    want: [string, Record<string, string>, number][];
  }[] = [
    // nobody connected: every state and wait type still written, as 0
    {
      name: 'no clients',
      clients: [],
      want: [
        [PG_METERS.backends, { state: 'active' }, 0],
        [PG_METERS.backendsWaiting, { wait_event_type: 'Lock' }, 0],
        [PG_METERS.connectionsInUse, {}, 0],
        [PG_METERS.connectionsMax, {}, 95],
      ],
    },
    // an idle backend waits on ClientRead by definition: not a waiter
    {
      name: 'idle waits are not counted',
      clients: [
        ['idle', 'Client'],
        ['active', 'Lock'],
        ['active', null],
      ],
      want: [
        [PG_METERS.backends, { state: 'idle' }, 1],
        [PG_METERS.backends, { state: 'active' }, 2],
        [PG_METERS.backendsWaiting, { wait_event_type: 'Client' }, 0],
        [PG_METERS.backendsWaiting, { wait_event_type: 'Lock' }, 1],
        [PG_METERS.connectionsInUse, {}, 3],
      ],
    },
    // another role's session without pg_read_all_stats shows no state
    {
      name: 'hidden state',
      clients: [[null, null]],
      want: [
        [PG_METERS.backends, { state: 'unknown' }, 1],
        [PG_METERS.connectionsInUse, {}, 1],
      ],
    },
    // a wait type a later PostgreSQL adds is kept under its own name
    {
      name: 'new wait type',
      clients: [['active', 'InjectionPoint']],
      want: [[PG_METERS.backendsWaiting, { wait_event_type: 'InjectionPoint' }, 1]],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const scrape: MeterScrape = {
        kind: 'plateau.meter-scrape',
        source: 's',
        atMs: 0,
        samples: activitySamples(row(c.clients), null),
      };
      for (const [name, labels, want] of c.want)
        assert.equal(value(scrape, name, labels), want, `${name}${JSON.stringify(labels)}`);
      assert.equal(value(scrape, PG_METERS.cpuSecondsTotal), undefined, 'no CPU without a local database');
    });
  }
});

describe('PostgresActivitySource on a real PostgreSQL', () => {
  let db: Database;
  let dir: string;
  const clients: pg.Client[] = [];

  before(async () => {
    db = await openDatabase({});
    dir = await mkdtemp(join(tmpdir(), 'plateau-pg-activity-'));
    const setup = await connect();
    await setup.query('CREATE TABLE account (id int PRIMARY KEY, balance int NOT NULL)');
    await setup.query('INSERT INTO account VALUES (1, 0)');
    await setup.end();
    clients.pop();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await db?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: db.url, application_name: 'activity-test' });
    client.on('error', () => undefined);
    await client.connect();
    clients.push(client);
    return client;
  }

  function source(name: string, options: { intervalMs?: number; timeoutMs?: number; url?: string } = {}) {
    const log = new WatchedLog(join(dir, `${name}.ndjson`));
    const src = new PostgresActivitySource({ url: options.url ?? db.url, log, ...options });
    return { log, src };
  }

  test('shows connections in use, their states and a backend waiting on a row lock', async () => {
    const [holder, waiter, sleeperA, sleeperB, idleA, idleB] = await Promise.all(
      Array.from({ length: 6 }, () => connect()),
    );
    // holder keeps row 1 locked in an open transaction; waiter queues behind it.
    await holder!.query('BEGIN');
    await holder!.query('UPDATE account SET balance = balance + 1 WHERE id = 1');
    const blocked = waiter!.query('UPDATE account SET balance = balance + 1 WHERE id = 1');
    let sleeping = true;
    const sleepLoop = async (client: pg.Client) => {
      while (sleeping) await client.query('SELECT pg_sleep(1)');
    };
    const sleepers = [sleepLoop(sleeperA!), sleepLoop(sleeperB!)];
    void idleA;
    void idleB;

    const { log, src } = source('states');
    src.start();
    try {
      // Sleepers are between two queries for an instant each second: wait for a reading that caught both.
      const scrape = await log.next(
        (s) => (value(s, PG_METERS.backends, { state: 'active' }) ?? 0) >= 3,
        15_000,
      );
      assert.equal(
        value(scrape, PG_METERS.connectionsInUse),
        6,
        'the six test clients, not the monitor itself',
      );
      assert.equal(value(scrape, PG_METERS.backends, { state: 'idle in transaction' }), 1);
      assert.equal(value(scrape, PG_METERS.backends, { state: 'idle' }), 2);
      assert.equal(value(scrape, PG_METERS.backends, { state: 'active' }), 3);
      assert.equal(value(scrape, PG_METERS.backendsWaiting, { wait_event_type: 'Lock' }), 1);
      assert.equal(
        value(scrape, PG_METERS.backendsWaiting, { wait_event_type: 'Timeout' }),
        2,
        'pg_sleep waits on a timeout',
      );
      assert.equal(value(scrape, PG_METERS.connectionsMax), db.info.ordinarySlots);
      assert.equal(src.cpuNote.startsWith('read from /proc'), true, src.cpuNote);
      assert.ok((value(scrape, PG_METERS.hostCpuCount) ?? 0) >= 1);
    } finally {
      sleeping = false;
      await holder!.query('COMMIT');
      await blocked;
      await Promise.all(sleepers);
    }
    const status = await src.stop();
    await log.close();
    assert.equal(status.failures, 0, String(status.lastError));
    assert.equal(status.kind, 'postgres');
    assert.ok(!status.source.includes(new URL(db.url).password), 'the label never shows the password');
    const written = [];
    for await (const scrape of readMeterLog(log.path)) written.push(scrape);
    assert.equal(written.length, log.scrapes.length, 'every reading is a line of the file');
  });

  test('the CPU counter rises while a backend burns CPU, and never falls when backends exit', async () => {
    const { log, src } = source('cpu');
    src.start();
    const cpu = (s: MeterScrape) => value(s, PG_METERS.cpuSecondsTotal);
    const first = await log.next((s) => cpu(s) !== undefined, 10_000);
    // A backend of its own that burns about half a second of CPU, then leaves (it is reaped).
    const burner = await connect();
    await burner.query('SELECT count(*) FROM generate_series(1, 3e6)');
    await burner.end();
    clients.splice(clients.indexOf(burner), 1);
    const doneAtMs = Date.now();
    const later = await log.next((s) => s.atMs > doneAtMs, 10_000);
    await src.stop();
    await log.close();
    assert.ok(cpu(later)! - cpu(first)! >= 0.2, `CPU rose by ${cpu(later)! - cpu(first)!} s`);
    const series = log.scrapes.map(cpu).filter((v) => v !== undefined);
    for (let i = 1; i < series.length; i++)
      assert.ok(series[i]! >= series[i - 1]!, `fell at reading ${i}: ${series}`);
  });

  test('a reading still running when the next is due is skipped, not stacked', async () => {
    const { log, src } = source('skips', { intervalMs: 1 });
    src.start();
    await log.next(() => log.scrapes.length >= 20, 10_000);
    const status = await src.stop();
    await log.close();
    assert.ok((status.skipped ?? 0) > 0, 'a 1 ms interval is shorter than a reading');
    assert.equal(status.failures, 0, String(status.lastError));
    assert.ok(status.attempts - log.scrapes.length <= 1, 'one reading at a time (the last may be abandoned)');
  });

  test('a refused login is a failure in words', async () => {
    const bad = new URL(db.url);
    bad.password = 'wrong';
    const { log, src } = source('login', { url: bad.toString() });
    src.start();
    assert.ok(await waitFor(() => src.status.failures >= 1, 10_000));
    const status = await src.stop();
    await log.close();
    assert.match(status.firstError ?? '', /password authentication failed.*28P01/);
    assert.equal(log.scrapes.length, 0);
  });

  test('a reading slower than its timeout is a failure in words, and the next connects anew', async () => {
    // No connect and authentication finishes within 1 ms: every reading times out.
    const { log, src } = source('timeout', { timeoutMs: 1 });
    src.start();
    assert.ok(await waitFor(() => src.status.failures >= 2, 10_000));
    const status = await src.stop();
    await log.close();
    assert.equal(status.firstError, 'timed out after 1 ms');
    assert.equal(log.scrapes.length, 0);
  });

  // Last: it stops the shared database.
  test('the database stopping mid-run gives failures in words and no throw', async () => {
    const { log, src } = source('gone');
    src.start();
    await log.next(() => true, 10_000);
    await db.stop();
    assert.ok(await waitFor(() => src.status.failures >= 2, 15_000), JSON.stringify(src.status));
    const status = await src.stop();
    await log.close();
    assert.equal(status.lastError, 'connection refused');
    assert.ok(status.attempts >= log.scrapes.length + status.failures);
  });
});
