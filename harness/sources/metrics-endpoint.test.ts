// A metrics endpoint source against real HTTP servers on port 0: the readings it writes, and
// each way an endpoint can fail (404, 500, HTML, slow, gone, NaN, too many series, too big).
// test-run: own-process (it looks for processes it left behind, by its PLATEAU_TEST_MARK)
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Gauge, Registry } from 'prom-client';
import type { MeterScrape, MeterSourceStatus } from '../../contract/index.ts';
import { FakeClock } from '../../test/helpers/fake-time.ts';
import { waitFor } from '../../test/helpers/processes.ts';
import { startTestServer } from '../../test/helpers/test-server.ts';
import { MeterLog, readMeterLog } from './meter-source.ts';
import { MetricsEndpointSource } from './metrics-endpoint.ts';

const dir = await mkdtemp(join(tmpdir(), 'plateau-metrics-endpoint-'));
after(() => rm(dir, { recursive: true, force: true }));

const keepHikari = (name: string) => name.startsWith('hikaricp_');

/** A real HTTP endpoint on port 0 that tells the test about each request it has answered. */
async function endpoint(handle: (req: IncomingMessage, res: ServerResponse, n: number) => void) {
  const events = new EventEmitter();
  let answered = 0;
  const server = await startTestServer({
    handle: (req, res) => {
      res.once('finish', () => events.emit('answered', ++answered));
      handle(req, res, server.requests.length);
    },
  });
  return {
    ...server,
    /** Resolves once `n` requests have been answered; rejects after `timeoutMs`. */
    async answered(n: number, timeoutMs = 10_000): Promise<void> {
      const signal = AbortSignal.timeout(timeoutMs);
      while (answered < n) await once(events, 'answered', { signal });
    },
  };
}

async function newLog(): Promise<MeterLog> {
  return new MeterLog(join(await mkdtemp(join(dir, 'run-')), 'meters.ndjson'));
}

async function scrapesOf(log: MeterLog): Promise<MeterScrape[]> {
  await log.close();
  const scrapes: MeterScrape[] = [];
  for await (const scrape of readMeterLog(log.path)) scrapes.push(scrape);
  return scrapes;
}

const text =
  (body: string, contentType = 'text/plain; version=0.0.4') =>
  (_: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': contentType });
    res.end(body);
  };

/** Starts a source, waits for `requests` answers, stops it: its status and what it wrote. */
async function readFor(
  url: string,
  until: () => Promise<void>,
  options: { intervalMs?: number; timeoutMs?: number; seriesCap?: number } = {},
): Promise<{ status: MeterSourceStatus; scrapes: MeterScrape[] }> {
  const log = await newLog();
  const source = new MetricsEndpointSource(url, { log, keep: keepHikari, intervalMs: 100, ...options });
  source.start();
  await until();
  const status = await source.stop();
  return { status, scrapes: await scrapesOf(log) };
}

test('hikaricp gauges that change are read once a second with the time the answer came', async () => {
  const registry = new Registry();
  const served: { active: number; pending: number }[] = [];
  const active = new Gauge({
    name: 'hikaricp_connections_active',
    help: 'a',
    labelNames: ['pool'],
    registers: [registry],
  });
  const pending = new Gauge({
    name: 'hikaricp_connections_pending',
    help: 'p',
    labelNames: ['pool'],
    registers: [registry],
  });
  new Gauge({ name: 'hikaricp_connections_max', help: 'm', labelNames: ['pool'], registers: [registry] }).set(
    { pool: 'orders' },
    4,
  );
  new Gauge({ name: 'jvm_threads_live_threads', help: 'j', registers: [registry] }).set(31);
  const service = await endpoint(async (_, res, n) => {
    // Each reading sees new figures, so a reading written twice or out of order shows.
    active.set({ pool: 'orders' }, n % 5);
    pending.set({ pool: 'orders' }, n * 10);
    served.push({ active: n % 5, pending: n * 10 });
    res.writeHead(200, { 'content-type': registry.contentType });
    res.end(await registry.metrics());
  });
  const { status, scrapes } = await readFor(`${service.url}/actuator/prometheus`, () => service.answered(4), {
    intervalMs: 1000,
  });

  assert.equal(status.source, `metrics ${service.url}/actuator/prometheus`);
  assert.equal(status.kind, 'metrics');
  assert.equal(status.failures, 0);
  assert.equal(status.attempts, 4);
  assert.equal(scrapes.length, 4);
  assert.deepEqual(
    scrapes.map((s) => s.samples.find((x) => x.name === 'hikaricp_connections_pending')?.value),
    served.map((s) => s.pending),
  );
  assert.deepEqual(
    scrapes.map((s) => s.samples.find((x) => x.name === 'hikaricp_connections_active')?.value),
    served.map((s) => s.active),
  );
  for (const scrape of scrapes) {
    assert.deepEqual(
      scrape.samples.find((x) => x.name === 'hikaricp_connections_max'),
      {
        name: 'hikaricp_connections_max',
        labels: { pool: 'orders' },
        value: 4,
      },
    );
  }
  // Once a second: the mean gap is 1 s (one late timer on a shared machine allowed for).
  const meanGapMs = (scrapes.at(-1)!.atMs - scrapes[0]!.atMs) / (scrapes.length - 1);
  assert.ok(meanGapMs > 900 && meanGapMs < 1200, `readings ${meanGapMs} ms apart on average`);
  assert.ok(Math.abs(scrapes.at(-1)!.atMs - Date.now()) < 5000, 'stamped with the wall clock, epoch ms');
  assert.deepEqual(status.unrecognised, ['jvm_threads_live_threads']);
  assert.ok(status.readMsMedian !== null && status.readMsMedian >= 0 && status.readMsMedian < 800);
  const headers = service.requests[0]!.headers;
  assert.match(String(headers.accept), /^text\/plain;version=0\.0\.4/);
  assert.match(String(headers['accept-encoding']), /gzip/);
});

test('a gzipped answer is read; the time written is the injected clock', async () => {
  const body = 'hikaricp_connections_active{pool="a"} 3\nhikaricp_connections_idle{pool="a"} 1\n';
  const service = await endpoint((_, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4', 'content-encoding': 'gzip' });
    res.end(gzipSync(body));
  });
  const log = await newLog();
  const clock = new FakeClock(1_900_000_000_000);
  const source = new MetricsEndpointSource(service.url, { log, keep: keepHikari, clock });
  source.start();
  await service.answered(1);
  const status = await source.stop();
  const scrapes = await scrapesOf(log);
  assert.equal(status.failures, 0);
  assert.deepEqual(scrapes, [
    {
      kind: 'plateau.meter-scrape',
      source: `metrics ${service.url}`,
      atMs: 1_900_000_000_000,
      samples: [
        { name: 'hikaricp_connections_active', labels: { pool: 'a' }, value: 3 },
        { name: 'hikaricp_connections_idle', labels: { pool: 'a' }, value: 1 },
      ],
    },
  ]);
});

test('an endpoint that fails says how, in words, and nothing is written', async () => {
  const html = '<!DOCTYPE html>\n<html><body>Whitelabel Error Page</body></html>\n';
  const cases: {
    name: string;
    handle: (req: IncomingMessage, res: ServerResponse) => void;
    words: RegExp;
  }[] = [
    // the path is wrong (Spring without the prometheus actuator)
    {
      name: '404',
      handle: (_, res) => {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
      },
      words: /^HTTP 404 Not Found$/,
    },
    // the service's own error, with its own reason phrase
    {
      name: '500',
      handle: (_, res) => {
        res.writeHead(500, 'Registry Broken', { 'content-type': 'text/plain' });
        res.end('boom');
      },
      words: /^HTTP 500 Registry Broken$/,
    },
    // a login page or an error page answered with 200
    {
      name: 'HTML',
      handle: text(html, 'text/html;charset=UTF-8'),
      words:
        /^not Prometheus text: the body starts with "<!DOCTYPE html>".* \(Content-Type text\/html;charset=UTF-8\)$/,
    },
    // Spring's JSON actuator index instead of the prometheus endpoint
    {
      name: 'JSON',
      handle: text('{"_links":{"self":{"href":"/actuator"}}}', 'application/json'),
      words: /^not Prometheus text: the body is JSON/,
    },
    // more than 10 MB of text
    {
      name: 'huge',
      handle: text(`# ${'x'.repeat(1022)}\n`.repeat(11 * 1024)),
      words: /^body over 10 MB$/,
    },
    // a small gzip that would unpack past 10 MB
    {
      name: 'gzip bomb',
      handle: (_, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        res.end(gzipSync(Buffer.alloc(11 * 1024 * 1024, 0x23)));
      },
      words: /^body over 10 MB$/,
    },
  ];
  for (const c of cases) {
    const service = await endpoint(c.handle);
    const { status, scrapes } = await readFor(service.url, () => service.answered(2));
    assert.equal(status.failures, status.attempts, c.name);
    assert.ok(status.attempts >= 2, c.name);
    assert.match(status.firstError ?? '', c.words, c.name);
    assert.match(status.lastError ?? '', c.words, c.name);
    assert.equal(scrapes.length, 0, c.name);
    assert.equal(status.readMsMedian, null, c.name);
  }
});

test('an endpoint slower than the timeout is a timed-out reading, and stop() does not wait for it', async () => {
  let answered = false;
  const service = await endpoint((_, res) => {
    setTimeout(() => {
      answered = true;
      text('hikaricp_connections_active 1\n')(_, res);
    }, 2000);
  });
  const { status, scrapes } = await readFor(
    service.url,
    async () => {
      await waitFor(() => service.requests.length >= 1, 5000);
    },
    { intervalMs: 1000, timeoutMs: 800 },
  );
  assert.equal(status.attempts, 1);
  assert.equal(status.failures, 1);
  assert.equal(status.firstError, 'timed out after 800 ms');
  assert.equal(scrapes.length, 0);
  assert.equal(answered, false, 'stopped at the timeout, not at the 2 s answer');
});

test('a slow endpoint is never asked twice at once: the ticks it misses are counted', async () => {
  let inFlight = 0;
  let mostInFlight = 0;
  const service = await endpoint((_, res) => {
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    setTimeout(() => {
      inFlight--;
      text('hikaricp_connections_active 1\n')(_, res);
    }, 600);
  });
  const { status, scrapes } = await readFor(service.url, () => service.answered(2), {
    intervalMs: 100,
    timeoutMs: 3000,
  });
  assert.equal(mostInFlight, 1);
  assert.equal(status.failures, 0);
  assert.equal(scrapes.length, status.attempts);
  // 600 ms answers at 100 ms ticks: about five ticks skipped per reading.
  assert.ok((status.skipped ?? 0) >= 6, `skipped ${status.skipped}`);
});

test('an endpoint that dies mid-run: the readings before are kept, the rest are refused', async () => {
  const service = await endpoint(text('hikaricp_connections_active{pool="a"} 2\n'));
  const log = await newLog();
  const source = new MetricsEndpointSource(service.url, { log, keep: keepHikari, intervalMs: 100 });
  source.start();
  await service.answered(2);
  service.server.closeAllConnections();
  await new Promise<void>((resolve) => service.server.close(() => resolve()));
  assert.ok(await waitFor(() => source.status.failures >= 2, 5000), 'failed readings after the close');
  const status = await source.stop();
  const scrapes = await scrapesOf(log);
  assert.ok(scrapes.length >= 2);
  assert.equal(status.attempts, scrapes.length + status.failures);
  assert.equal(status.lastError, 'connection refused');
});

test('an endpoint that never answered: connection refused, counted, never thrown', async () => {
  const service = await endpoint(text(''));
  service.server.close();
  const log = await newLog();
  const source = new MetricsEndpointSource(service.url, { log, keep: keepHikari, intervalMs: 50 });
  source.start();
  assert.ok(await waitFor(() => source.status.failures >= 3, 5000));
  const status = await source.stop();
  assert.equal(status.failures, status.attempts);
  assert.equal(status.firstError, 'connection refused');
  assert.deepEqual(await scrapesOf(log), []);
});

test('NaN and ±Inf samples are dropped and counted; the finite ones are kept', async () => {
  const body = [
    '# TYPE hikaricp_connections_active gauge',
    'hikaricp_connections_active{pool="a"} NaN',
    'hikaricp_connections_active{pool="b"} 3',
    'hikaricp_connections_usage_seconds_max{pool="a"} +Inf',
    'hikaricp_connections_usage_seconds_max{pool="b"} -Inf',
    '',
  ].join('\n');
  const service = await endpoint(text(body));
  const { status, scrapes } = await readFor(service.url, () => service.answered(2));
  assert.equal(status.failures, 0);
  assert.equal(status.nonFinite, 3 * scrapes.length);
  assert.deepEqual(scrapes[0]!.samples, [
    { name: 'hikaricp_connections_active', labels: { pool: 'b' }, value: 3 },
  ]);
});

test('a cardinality explosion keeps the first series up to the cap and notes how many were over', async () => {
  const lines = Array.from({ length: 6000 }, (_, i) => `hikaricp_connections_active{pool="p${i}"} ${i}`);
  const service = await endpoint(text(`${lines.join('\n')}\njvm_gc_pause_seconds_count 3\n`));
  const { status, scrapes } = await readFor(service.url, () => service.answered(1), { intervalMs: 1000 });
  assert.equal(status.failures, 0);
  assert.deepEqual(status.seriesCapped, { cap: 5000, dropped: 1000 });
  assert.equal(scrapes[0]!.samples.length, 5000);
  assert.deepEqual(scrapes[0]!.samples.at(-1), {
    name: 'hikaricp_connections_active',
    labels: { pool: 'p4999' },
    value: 4999,
  });
});

test('meter names nobody reads are listed, the first 50 in order', async () => {
  const lines = Array.from({ length: 60 }, (_, i) => `app_thing_${String(i).padStart(2, '0')} 1`);
  const service = await endpoint(text(`${lines.join('\n')}\nhikaricp_connections_max 4\n`));
  const { status, scrapes } = await readFor(service.url, () => service.answered(1), { intervalMs: 1000 });
  assert.equal(status.unrecognised.length, 50);
  assert.equal(status.unrecognised[0], 'app_thing_00');
  assert.equal(status.unrecognised[49], 'app_thing_49');
  assert.deepEqual(
    scrapes[0]!.samples.map((s) => s.name),
    ['hikaricp_connections_max'],
  );
});

test('stop() twice gives the same status; start() after stop() reads nothing', async () => {
  const service = await endpoint(text('hikaricp_connections_max 4\n'));
  const log = await newLog();
  const source = new MetricsEndpointSource(service.url, { log, keep: keepHikari });
  source.start();
  await service.answered(1);
  const first = await source.stop();
  assert.deepEqual(await source.stop(), first);
  source.start();
  assert.equal(source.status.attempts, first.attempts);
  assert.equal(service.requests.length, 1);
});
