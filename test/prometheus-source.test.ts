// A real Prometheus server (Debian's) scrapes a service's hikaricp meters while plateau's own
// endpoint source reads them too; what readPrometheusServer gives for the window must be the
// values the service served. Needs /usr/bin/prometheus (or PROMETHEUS_BIN); without it every
// test here is skipped with one line saying why, never counted as passed.
// test-run: load
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Gauge, Registry } from 'prom-client';
import type { MeterSample, MeterScrape } from '../contract/index.ts';
import { MeterLog, readMeterLog } from '../harness/sources/meter-source.ts';
import { MetricsEndpointSource } from '../harness/sources/metrics-endpoint.ts';
import {
  type PrometheusServerReading,
  PrometheusServerSource,
  readPrometheusServer,
} from '../harness/sources/prometheus-server.ts';
import {
  type PrometheusServer,
  prometheusAvailable,
  prometheusVersion,
  startPrometheusServer,
} from './helpers/prometheus-server.ts';
import { startTestServer } from './helpers/test-server.ts';

const missing = prometheusAvailable();
const skip = missing ? `prometheus-source suite not run: ${missing}` : false;
process.stdout.write(`# ${skip || `prometheus-source suite: ${prometheusVersion()}`}\n`);

const HIKARI = ['hikaricp_connections_active', 'hikaricp_connections_pending', 'hikaricp_connections_max'];

/** Pending callers step up by one every 2 s from t0: a figure that is a known function of time. */
const t0 = Date.now();
const pendingAt = (ms: number) => Math.floor((ms - t0) / 2000);

async function scrapesIn(path: string): Promise<MeterScrape[]> {
  const scrapes: MeterScrape[] = [];
  for await (const scrape of readMeterLog(path)) scrapes.push(scrape);
  return scrapes;
}

const sampleOf = (scrape: MeterScrape, name: string): MeterSample | undefined =>
  scrape.samples.find((s) => s.name === name);

describe('a Prometheus server read after the study', { skip }, () => {
  let dir: string;
  let prometheus: PrometheusServer;
  let target: string;
  let startMs: number;
  let endMs: number;
  let endpointScrapes: MeterScrape[];
  let reading: PrometheusServerReading;
  let serverScrapes: MeterScrape[];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'plateau-prometheus-source-'));
    const registry = new Registry();
    new Gauge({
      name: 'hikaricp_connections_pending',
      help: 'Pending threads',
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        this.set({ pool: 'orders' }, pendingAt(Date.now()));
      },
    });
    new Gauge({
      name: 'hikaricp_connections_active',
      help: 'Active connections',
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        this.set({ pool: 'orders' }, pendingAt(Date.now()) % 5);
      },
    });
    new Gauge({
      name: 'hikaricp_connections_max',
      help: 'Max',
      labelNames: ['pool'],
      registers: [registry],
    }).set({ pool: 'orders' }, 4);
    new Gauge({ name: 'jvm_threads_live_threads', help: 'Live threads', registers: [registry] }).set(31);
    const service = await startTestServer({
      handle: async (_, res) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(await registry.metrics());
      },
    });
    target = `127.0.0.1:${(service.server.address() as AddressInfo).port}`;
    prometheus = await startPrometheusServer({
      targets: [target],
      metricsPath: '/actuator/prometheus',
      awaitScrapes: { target, times: 1 },
    });

    // The study: 8 s in which plateau's endpoint source reads the same endpoint once a second.
    const endpointLog = new MeterLog(join(dir, 'endpoint.ndjson'));
    const source = new MetricsEndpointSource(`${service.url}/actuator/prometheus`, {
      log: endpointLog,
      keep: (name) => HIKARI.includes(name),
    });
    startMs = Date.now();
    source.start();
    await prometheus.scraped(target, 9);
    endMs = Date.now();
    await source.stop();
    await endpointLog.close();
    endpointScrapes = await scrapesIn(endpointLog.path);
    // Prometheus stores a scrape once it is taken: one more, and the window's last second is in.
    await prometheus.scraped(target, 10);

    const log = new MeterLog(join(dir, 'server.ndjson'));
    reading = await readPrometheusServer({
      url: prometheus.url,
      match: '{job="orders"}',
      names: HIKARI,
      expressions: [
        { name: 'orders', field: 'inUse', promql: 'sum(hikaricp_connections_active{job="orders"})' },
        { name: 'broken', field: 'max', promql: 'rate(hikaricp_connections_max[' },
      ],
      startMs,
      endMs,
      log,
    });
    await log.close();
    serverScrapes = await scrapesIn(log.path);
  });

  after(async () => {
    await prometheus?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('the step is the server scrape interval, one scrape per second of the window', () => {
    assert.equal(reading.stepSeconds, 1);
    assert.equal(reading.stepFrom, 'server');
    const seconds = (endMs - startMs) / 1000;
    assert.ok(
      Math.abs(serverScrapes.length - seconds) <= 1.5,
      `${serverScrapes.length} scrapes in ${seconds} s`,
    );
    for (const scrape of serverScrapes) {
      assert.equal(scrape.source, `prometheus ${prometheus.url}`);
      assert.ok(scrape.atMs >= startMs - 1 && scrape.atMs <= endMs + 1, 'inside the window');
    }
    assert.deepEqual(
      serverScrapes.map((s) => s.atMs),
      serverScrapes.map((s) => s.atMs).sort((a, b) => a - b),
    );
  });

  test('the values are those the service served, with the labels Prometheus gave them', () => {
    for (const scrape of serverScrapes) {
      assert.deepEqual(sampleOf(scrape, 'hikaricp_connections_max'), {
        name: 'hikaricp_connections_max',
        labels: { instance: target, job: 'orders', pool: 'orders' },
        value: 4,
      });
      // At time t Prometheus shows its last scrape, taken within the second before t.
      const pending = sampleOf(scrape, 'hikaricp_connections_pending')!.value;
      assert.ok(
        pending >= pendingAt(scrape.atMs - 1100) && pending <= pendingAt(scrape.atMs + 100),
        `pending ${pending} at ${scrape.atMs - t0} ms`,
      );
      assert.equal(sampleOf(scrape, 'hikaricp_connections_active')!.value, pending % 5);
    }
  });

  test("the endpoint source and the server agree on the window's figures", () => {
    const distinct = (scrapes: MeterScrape[]) =>
      new Set(scrapes.map((s) => sampleOf(s, 'hikaricp_connections_pending')!.value));
    const fromEndpoint = distinct(endpointScrapes);
    const fromServer = distinct(serverScrapes);
    // The edges may fall either side of a step of the figure; every value between is in both.
    const all = [...new Set([...fromEndpoint, ...fromServer])].sort((a, b) => a - b);
    const inner = all.slice(1, -1);
    assert.ok(inner.length >= 2, `values ${all.join(',')}`);
    for (const value of inner) {
      assert.ok(fromEndpoint.has(value) && fromServer.has(value), `${value} in both`);
    }
    for (const scrape of endpointScrapes) {
      const pending = sampleOf(scrape, 'hikaricp_connections_pending')!.value;
      assert.ok(pending >= pendingAt(scrape.atMs - 100) && pending <= pendingAt(scrape.atMs));
    }
  });

  test('a declared expression is written under its declared name, with its own figure', () => {
    for (const scrape of serverScrapes) {
      const declared = sampleOf(scrape, 'plateau_declared:orders:inUse');
      assert.ok(declared, `declared figure at ${scrape.atMs}`);
      assert.deepEqual(declared.labels, {});
      assert.equal(declared.value, sampleOf(scrape, 'hikaricp_connections_active')!.value);
    }
  });

  test('an expression the server rejects shows its message; the rest is still read', () => {
    assert.equal(reading.status.attempts, 3);
    assert.equal(reading.status.failures, 1);
    assert.equal(reading.errors.length, 1);
    process.stdout.write(`# rejected: ${reading.errors[0]}\n`);
    assert.match(
      reading.status.lastError ?? '',
      /^broken max \(rate\(hikaricp_connections_max\[\): HTTP 400 Bad Request: bad_data: .*parse error/,
    );
  });

  test('meters of the job that nobody reads are listed, Prometheus own series not', () => {
    assert.deepEqual(reading.status.unrecognised, ['jvm_threads_live_threads']);
  });

  test('a window longer than 10,000 steps is read in chunks the server accepts', async () => {
    const log = new MeterLog(join(dir, 'long.ndjson'));
    // Four hours at 1 s is 14,401 steps: one query would be refused (11,000 at most).
    const long = await readPrometheusServer({
      url: prometheus.url,
      match: '{job="orders"}',
      names: ['hikaricp_connections_max'],
      expressions: [],
      startMs: endMs - 4 * 3_600_000,
      endMs,
      log,
    });
    await log.close();
    assert.equal(long.status.failures, 0, String(long.status.lastError));
    assert.equal(long.status.attempts, 2);
    const scrapes = await scrapesIn(log.path);
    assert.ok(scrapes.length >= 8, `${scrapes.length} scrapes`);
    assert.ok(scrapes.every((s) => sampleOf(s, 'hikaricp_connections_max')?.value === 4));
  });

  test('as a part of the study: start() opens the window, stop() reads it', async () => {
    const log = new MeterLog(join(dir, 'part.ndjson'));
    const times = [startMs, endMs];
    const source = new PrometheusServerSource(
      { url: prometheus.url, match: '{job="orders"}', names: HIKARI, expressions: [], log },
      { now: () => times.shift() ?? endMs },
    );
    source.start();
    const status = await source.stop();
    await log.close();
    assert.equal(status.failures, 0, String(status.lastError));
    assert.equal(status.attempts, 1);
    const scrapes = await scrapesIn(log.path);
    assert.deepEqual(
      scrapes.map((s) => s.atMs),
      serverScrapes.map((s) => s.atMs),
    );
    assert.throws(
      () =>
        new PrometheusServerSource({
          url: prometheus.url,
          match: 'orders',
          names: HIKARI,
          expressions: [],
          log,
        }),
      /not a label matcher block/,
    );
  });
});
