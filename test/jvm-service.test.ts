// The JVM service plateau did not write (examples/jvm-service) against a real embedded
// PostgreSQL: it answers, and its /actuator/prometheus carries the meters a Spring Boot
// service with HikariCP publishes, under Micrometer's names, moving as its pool and request
// threads fill. Needs a JDK and Debian's jars; without them every test here is skipped with
// one line saying why, never counted as passed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { parsePrometheusText } from '../analysis/resources/prometheus-text.ts';
import type { MeterSample } from '../contract/index.ts';
import { type Database, openDatabase } from '../harness/db/database.ts';
import { fetchText, type TestResponse } from './helpers/http.ts';
import { type JvmService, jvmAvailable, startJvmService } from './helpers/jvm-service.ts';

const missing = jvmAvailable();
const skip = missing === null ? false : `jvm-service suite not run: ${missing}`;
if (skip) process.stdout.write(`# ${skip}\n`);

let db: Database | undefined;
const started: JvmService[] = [];
before(async () => {
  if (skip) return;
  db = await openDatabase({ databaseUrl: process.env.PLATEAU_TEST_DATABASE_URL });
});
after(async () => {
  for (const service of started) await service.stop();
  await db?.stop();
});

async function start(env: Record<string, string | number>): Promise<JvmService> {
  const service = await startJvmService({ databaseUrl: db!.url, env });
  started.push(service);
  return service;
}

/** One scrape: the samples as plateau's own reader parses them, and each family's HELP and TYPE lines. */
interface Scrape {
  text: string;
  samples: MeterSample[];
  types: Map<string, string>;
  helps: Map<string, string>;
}

async function scrape(service: JvmService): Promise<Scrape> {
  const res = await fetchText(service.metricsUrl);
  assert.equal(res.status, 200, res.text);
  const parsed = parsePrometheusText(res.text);
  assert.equal(parsed.error, null, `${parsed.error}\n${res.text}`);
  assert.equal(parsed.dropped.invalidLines, 0, `first bad line: ${parsed.firstInvalidLine}`);
  const types = new Map<string, string>();
  const helps = new Map<string, string>();
  for (const line of res.text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    // A HELP may be blank: Spring's http_server_requests_seconds has `# HELP <name>  `.
    const help = /^# HELP (\S+) (.*)$/.exec(line);
    if (help) helps.set(help[1]!, help[2]!);
  }
  return { text: res.text, samples: parsed.samples, types, helps };
}

/** The value of the series `name` whose labels include `labels`; undefined when there is none. */
function value(s: Scrape, name: string, labels: Record<string, string> = {}): number | undefined {
  return s.samples.find(
    (sample) => sample.name === name && Object.entries(labels).every(([key, v]) => sample.labels[key] === v),
  )?.value;
}

/** Scrapes every 20 ms until `check` holds or `timeoutMs` passes; the last scrape either way. */
async function scrapeUntil(
  service: JvmService,
  check: (s: Scrape) => boolean,
  timeoutMs: number,
): Promise<{ held: boolean; last: Scrape }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const last = await scrape(service);
    if (check(last)) return { held: true, last };
    if (Date.now() > deadline) return { held: false, last };
    await delay(20);
  }
}

function json(res: TestResponse): unknown {
  return JSON.parse(res.text);
}

const POOL = { pool: 'orders' };
const HTTP = { name: 'http' };

/**
 * Every family the service publishes, with its TYPE and the tags it carries, as Micrometer
 * writes them for HikariCP's MicrometerMetricsTracker, ExecutorServiceMetrics,
 * ProcessorMetrics and UptimeMetrics. A Timer is a summary (`_count`, `_sum`) and a `_max`
 * gauge; a counter's family is named with `_total`.
 */
const FAMILIES: Array<[name: string, type: string, labels: Record<string, string>]> = [
  // HikariCP: the pool's gauges, tagged with its pool name
  ['hikaricp_connections_active', 'gauge', POOL],
  ['hikaricp_connections_idle', 'gauge', POOL],
  ['hikaricp_connections_pending', 'gauge', POOL],
  ['hikaricp_connections_max', 'gauge', POOL],
  ['hikaricp_connections_min', 'gauge', POOL],
  ['hikaricp_connections', 'gauge', POOL],
  // HikariCP: acquire timeouts, a counter
  ['hikaricp_connections_timeout_total', 'counter', POOL],
  // HikariCP: three timers (acquire in ns, usage and creation in ms, all shown in seconds)
  ['hikaricp_connections_acquire_seconds', 'summary', POOL],
  ['hikaricp_connections_acquire_seconds_max', 'gauge', POOL],
  ['hikaricp_connections_usage_seconds', 'summary', POOL],
  ['hikaricp_connections_usage_seconds_max', 'gauge', POOL],
  ['hikaricp_connections_creation_seconds', 'summary', POOL],
  ['hikaricp_connections_creation_seconds_max', 'gauge', POOL],
  // ExecutorServiceMetrics on the request threads, tagged name="http"
  ['executor_active_threads', 'gauge', HTTP],
  ['executor_pool_size_threads', 'gauge', HTTP],
  ['executor_pool_core_threads', 'gauge', HTTP],
  ['executor_pool_max_threads', 'gauge', HTTP],
  ['executor_queued_tasks', 'gauge', HTTP],
  ['executor_queue_remaining_tasks', 'gauge', HTTP],
  ['executor_completed_tasks_total', 'counter', HTTP],
  // ProcessorMetrics and UptimeMetrics: no tags
  ['process_cpu_usage', 'gauge', {}],
  ['system_cpu_count', 'gauge', {}],
  ['process_cpu_time_ns_total', 'counter', {}],
  ['process_start_time_seconds', 'gauge', {}],
];

test('GET /orders answers 200, and /actuator/prometheus has every meter under Micrometer’s names, sized by POOL_MAX and THREADS', {
  skip,
}, async () => {
  const service = await start({ POOL_MAX: 3, THREADS: 5, QUERY_MS: 10 });
  const order = await fetchText(`${service.ordersUrl}?account=7`);
  assert.equal(order.status, 200, order.text);
  assert.deepEqual(json(order), { account: 7, orders: [] });
  // A study's --target has no query string: the account defaults.
  assert.equal((await fetchText(service.ordersUrl)).status, 200);
  assert.equal((await fetchText(`${service.ordersUrl}?account=x`)).status, 400);
  assert.equal((await fetchText(`${service.url}/healthz`)).status, 200);

  const res = await fetchText(service.metricsUrl);
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  // A request thread counts its task completed, and Spring's timer records, just after the
  // answer is sent: wait for both rather than race them.
  const { held, last: s } = await scrapeUntil(
    service,
    (s) =>
      value(s, 'executor_completed_tasks_total', HTTP) === 3 &&
      value(s, 'http_server_requests_seconds_count', { status: '200', uri: '/orders' }) === 2,
    5_000,
  );
  assert.ok(held, s.text);
  for (const [name, type, labels] of FAMILIES) {
    assert.equal(s.types.get(name), type, `# TYPE ${name} ${type}`);
    assert.ok(s.helps.get(name)?.trim(), `# HELP ${name} has Micrometer's description`);
    const series = type === 'summary' ? [`${name}_count`, `${name}_sum`] : [name];
    for (const sample of series) {
      assert.notEqual(
        value(s, sample, labels),
        undefined,
        `${sample}${JSON.stringify(labels)} in\n${s.text}`,
      );
    }
  }
  // Label sets as Micrometer 1.13+ writes them: no trailing comma.
  assert.match(s.text, /^hikaricp_connections_active\{pool="orders"\} \d+\.\d+$/m);
  assert.equal(value(s, 'hikaricp_connections_max', POOL), 3);
  // minimumIdle is unset, so HikariCP keeps it at maximumPoolSize.
  assert.equal(value(s, 'hikaricp_connections_min', POOL), 3);
  assert.equal(value(s, 'executor_pool_max_threads', HTTP), 5);
  assert.equal(value(s, 'executor_pool_core_threads', HTTP), 5);
  // The default queue is unbounded: Micrometer still publishes what remains of it, Integer.MAX_VALUE.
  assert.match(s.text, /^executor_queue_remaining_tasks\{name="http"\} 2\.147483647E9$/m);
  assert.equal(value(s, 'executor_queued_tasks', HTTP), 0);
  // Two queries ran (the bad account never borrowed a connection); each borrow is timed.
  assert.equal(value(s, 'hikaricp_connections_acquire_seconds_count', POOL), 2);
  assert.equal(value(s, 'hikaricp_connections_usage_seconds_count', POOL), 2);
  assert.ok(value(s, 'hikaricp_connections_usage_seconds_sum', POOL)! >= 0.015);
  assert.ok(value(s, 'hikaricp_connections_creation_seconds_count', POOL)! >= 1);
  assert.equal(value(s, 'hikaricp_connections_timeout_total', POOL), 0);
  assert.ok(value(s, 'system_cpu_count')! >= 1);
  const startedAt = value(s, 'process_start_time_seconds')!;
  assert.ok(Math.abs(startedAt - Date.now() / 1000) < 120, `process_start_time_seconds ${startedAt}`);
  // Spring's own request timer is there too, with its tags and a blank HELP.
  assert.equal(s.types.get('http_server_requests_seconds'), 'summary');
  assert.equal(s.helps.get('http_server_requests_seconds'), ' ');
});

test('with more requests than connections, a scrape while they run shows the pool full and callers pending', {
  skip,
}, async () => {
  const service = await start({ POOL_MAX: 2, THREADS: 8, QUERY_MS: 200 });
  const requests = Array.from({ length: 8 }, (_, i) => fetchText(`${service.ordersUrl}?account=${i}`));
  // 8 queries of 200 ms on 2 connections keep the pool full for about 800 ms: the scrape,
  // on its own thread, sees it while every request thread is busy.
  const { held, last } = await scrapeUntil(
    service,
    (s) =>
      value(s, 'hikaricp_connections_active', POOL) === 2 &&
      value(s, 'hikaricp_connections_pending', POOL)! >= 1,
    5_000,
  );
  const answers = await Promise.all(requests);
  assert.ok(held, `never active 2 with pending >= 1; last scrape:\n${last.text}`);
  // The requests waiting for a connection hold request threads meanwhile.
  assert.ok(value(last, 'executor_active_threads', HTTP)! >= 3, last.text);
  assert.deepEqual(
    answers.map((a) => a.status),
    Array(8).fill(200),
  );
  const s = await scrape(service);
  assert.equal(value(s, 'hikaricp_connections_active', POOL), 0);
  assert.equal(value(s, 'hikaricp_connections_pending', POOL), 0);
  // The waits were timed: the last of 8 waited about three queries.
  assert.ok(value(s, 'hikaricp_connections_acquire_seconds_max', POOL)! >= 0.3, s.text);
});

test('with every request thread busy and requests queued, a scrape is still answered and shows the queue', {
  skip,
}, async () => {
  const service = await start({ THREADS: 2, POOL_MAX: 2, QUERY_MS: 300 });
  // 2 run and 4 wait in the queue for about 900 ms. A scrape that had to queue behind them
  // (on the request threads) would only run once the queue was empty.
  const requests = Array.from({ length: 6 }, (_, i) => fetchText(`${service.ordersUrl}?account=${i}`));
  const { held, last } = await scrapeUntil(
    service,
    (s) => value(s, 'executor_active_threads', HTTP) === 2 && value(s, 'executor_queued_tasks', HTTP)! >= 1,
    5_000,
  );
  const answers = await Promise.all(requests);
  assert.ok(held, `never 2 threads busy with requests queued; last scrape:\n${last.text}`);
  assert.equal(value(last, 'executor_pool_size_threads', HTTP), 2);
  assert.deepEqual(
    answers.map((a) => a.status),
    Array(6).fill(200),
  );
});

test('a request that waits longer than ACQUIRE_TIMEOUT_MS answers 503 timeout, and hikaricp_connections_timeout_total counts each', {
  skip,
}, async () => {
  const service = await start({ POOL_MAX: 1, THREADS: 8, ACQUIRE_TIMEOUT_MS: 250, QUERY_MS: 600 });
  // One connection held 600 ms: the others give up after 250 ms.
  const answers = await Promise.all(
    Array.from({ length: 5 }, (_, i) => fetchText(`${service.ordersUrl}?account=${i}`)),
  );
  const timedOut = answers.filter((a) => a.status === 503);
  assert.ok(
    answers.some((a) => a.status === 200),
    answers.map((a) => a.status).join(' '),
  );
  assert.ok(timedOut.length >= 1, answers.map((a) => a.status).join(' '));
  for (const refused of timedOut) {
    assert.deepEqual(json(refused), { error: 'overloaded', reason: 'timeout' });
    assert.equal(refused.headers['retry-after'], '1');
  }
  assert.equal(
    answers.filter((a) => a.status !== 200 && a.status !== 503).length,
    0,
    answers.map((a) => a.status).join(' '),
  );
  const s = await scrape(service);
  assert.equal(value(s, 'hikaricp_connections_timeout_total', POOL), timedOut.length, s.text);
});

test('with QUEUE_MAX set, a request finding the threads busy and the queue full answers 503 queue, and the queue publishes what remains of it', {
  skip,
}, async () => {
  const service = await start({ THREADS: 1, QUEUE_MAX: 1, POOL_MAX: 1, QUERY_MS: 300 });
  const idle = await scrape(service);
  assert.equal(value(idle, 'executor_queue_remaining_tasks', HTTP), 1);
  // One runs, one waits in the queue, the rest are refused at the door.
  const answers = await Promise.all(
    Array.from({ length: 4 }, (_, i) => fetchText(`${service.ordersUrl}?account=${i}`)),
  );
  const statuses = answers.map((a) => a.status).join(' ');
  const refused = answers.filter((a) => a.status === 503);
  assert.ok(refused.length >= 1, statuses);
  assert.ok(answers.filter((a) => a.status === 200).length >= 2, statuses);
  for (const answer of refused) assert.deepEqual(json(answer), { error: 'overloaded', reason: 'queue' });
  const { held, last } = await scrapeUntil(
    service,
    (s) => value(s, 'executor_completed_tasks_total', HTTP) === 4 - refused.length,
    5_000,
  );
  assert.ok(held, `refused ${refused.length} of 4, completed tasks:\n${last.text}`);
  assert.equal(value(last, 'executor_pool_max_threads', HTTP), 1);
});

test('CPU_MS burns that much CPU per request, as process_cpu_time_ns_total shows', { skip }, async () => {
  const service = await start({ CPU_MS: 100, QUERY_MS: 0 });
  const before = value(await scrape(service), 'process_cpu_time_ns_total')!;
  for (let i = 0; i < 3; i++) assert.equal((await fetchText(service.ordersUrl)).status, 200);
  const spent = value(await scrape(service), 'process_cpu_time_ns_total')! - before;
  assert.ok(spent >= 0.3e9, `3 requests of CPU_MS=100 spent ${spent / 1e6} ms of CPU`);
});

test('bad settings stop it before it listens, with every problem named', { skip }, async () => {
  await assert.rejects(
    startJvmService({ databaseUrl: db!.url, env: { THREADS: 'abc', POOL_MAX: 0 } }),
    (error: Error) => {
      assert.match(error.message, /exited \(code 2\) before it was listening/);
      assert.match(error.message, /THREADS=abc: give a whole number from 1 to 1000/);
      assert.match(error.message, /POOL_MAX=0: give a whole number from 1 to 1000/);
      return true;
    },
  );
});
