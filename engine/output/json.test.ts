// The JSON output serializes an event's time and tags once and writes one string per event:
// checked line by line against a line object per sample through JSON.stringify.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Metric, type SampleContainer } from '../metrics/metric.ts';
import { JsonOutput, metricLine } from './json.ts';
import { formatRfc3339 } from './time-format.ts';

/** A Point line as k6 shapes it, the plain way. */
function expectedPoint(container: SampleContainer, i: number): string {
  const tags: Record<string, string> = {};
  for (const key of Object.keys(container.tags).sort()) tags[key] = container.tags[key]!;
  const data: Record<string, unknown> = {
    time: formatRfc3339(container.timeMs, true),
    value: container.values[i],
    tags,
  };
  if (container.metadata && Object.keys(container.metadata).length > 0) data.metadata = container.metadata;
  return JSON.stringify({ metric: container.metrics[i]!.name, type: 'Point', data });
}

test('Point lines equal one JSON.stringify per sample, Metric lines come first, across many chunks', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-json-'));
  try {
    const file = join(dir, 'out.ndjson');
    const json = new JsonOutput(file);
    await json.start();
    const request = ['http_reqs', 'http_req_duration', 'http_req_failed'].map(
      (name) => new Metric(name, 'trend', 'time'),
    );
    const custom = [new Metric('queue_depth', 'gauge', 'default')];
    const expected: string[] = [];
    const batch: SampleContainer[] = [];
    const odd = [Number.NaN, Number.POSITIVE_INFINITY, -0, 1e21, -1.5e-7, 2 ** 53 + 2];
    for (let i = 0; i < 6_000; i++) {
      const metrics = i % 4 === 3 ? custom : request;
      const container: SampleContainer = {
        timeMs: 1_700_000_000_000 + i * 0.37,
        tags: {
          url: `http://127.0.0.1:8080/items/${i}?q="quoted"\\${'x'.repeat(i % 200)}`,
          method: 'GET',
          status: '200',
          step: `s${i % 5}`,
          ...(i % 9 === 0 ? { check: 'ünïcödé ✓\n' } : {}),
        },
        metrics,
        values: metrics.map((_, k) => (i % 50 === 0 ? odd[(i / 50 + k) % odd.length]! : i * 0.001 + k)),
        ...(i % 7 === 0 ? { metadata: { vu: String(i % 3), iter: String(i) } } : {}),
      };
      for (let k = 0; k < metrics.length; k++) {
        expected.push(expectedPoint(container, k));
      }
      batch.push(container);
      if (batch.length === 300) json.addMetricSamples(batch.splice(0));
    }
    json.addMetricSamples(batch);
    await json.stop();
    const text = await readFile(file, 'utf8');
    assert.ok(text.length > 4 * 256 * 1024, `spans many chunks (${text.length} bytes)`);
    const lines = text.split('\n').slice(0, -1);
    const points = lines.filter((l) => l.includes('"type":"Point"'));
    const announced = lines.filter((l) => l.startsWith('{"type":"Metric"'));
    assert.deepEqual(announced, [...request, ...custom].map(metricLine));
    assert.equal(points.length, expected.length);
    for (let i = 0; i < points.length; i++) assert.equal(points[i], expected[i], `point ${i}`);
    // Each metric's Metric line comes before its first Point.
    for (const metric of [...request, ...custom]) {
      const first = lines.findIndex((l) => l.startsWith(`{"metric":"${metric.name}"`));
      assert.ok(lines.indexOf(metricLine(metric)) < first, `${metric.name} announced first`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
