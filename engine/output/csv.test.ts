// The CSV output formats an event's tag columns once and packs rows into 256 KB chunks:
// checked row by row against plain formatting over many chunks, with quoting and UTF-8.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { Metric, type SampleContainer } from '../metrics/metric.ts';
import { CsvOutput, csvField, DEFAULT_CSV_TAG_COLUMNS } from './csv.ts';

/** One row as plain string formatting writes it. */
function expectedRow(name: string, timeMs: number, value: number, tags: Record<string, string>): string {
  const columns = [...DEFAULT_CSV_TAG_COLUMNS]
    .sort()
    .map((c) => (tags[c] === undefined ? '' : csvField(tags[c])));
  const extra = Object.keys(tags)
    .filter((k) => !(DEFAULT_CSV_TAG_COLUMNS as readonly string[]).includes(k))
    .map((k) => `${k}=${tags[k]}`)
    .join('&');
  return [name, String(Math.floor(timeMs / 1000)), value.toFixed(6), ...columns, csvField(extra), ''].join(
    ',',
  );
}

test('rows across many chunks equal plain formatting, with quoting and non-ASCII tags', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-csv-'));
  try {
    const file = join(dir, 'out.csv');
    const csv = new CsvOutput({ fileName: file, saveIntervalMs: 60_000, timeFormat: 'unix' });
    await csv.start();
    const metrics = ['http_reqs', 'http_req_duration', 'http_req_blocked', 'päivä_trend'].map(
      (name) => new Metric(name, 'trend', 'time'),
    );
    const expected: string[] = [];
    const batch: SampleContainer[] = [];
    for (let i = 0; i < 20_000; i++) {
      const tags: Record<string, string> = {
        method: 'GET',
        url: `http://127.0.0.1:8080/items/${i}?q=${'x'.repeat(i % 300)}`,
        name: i % 7 === 0 ? 'with, comma and "quotes"' : `item ${i}`,
        status: '200',
        scenario: 'ramp',
        step: `s${i % 5}`,
        ...(i % 11 === 0 ? { check: 'ünïcödé ✓' } : {}),
        ...(i % 13 === 0 ? { group: ' leading space', error: 'tab\there', site: '\\.' } : {}),
      };
      const values = metrics.map((_, k) => i * 0.001 + k);
      const timeMs = 1_700_000_000_000 + i * 10;
      batch.push({ timeMs, tags, metrics, values });
      metrics.forEach((m, k) => {
        expected.push(expectedRow(m.name, timeMs, values[k]!, tags));
      });
      if (batch.length === 500) csv.addMetricSamples(batch.splice(0));
    }
    csv.addMetricSamples(batch);
    await csv.stop();
    const text = await readFile(file, 'utf8');
    assert.ok(text.length > 4 * 256 * 1024, `spans many chunks (${text.length} bytes)`);
    const lines = text.split('\n').slice(1, -1);
    assert.equal(lines.length, expected.length);
    for (let i = 0; i < lines.length; i++) {
      if (lines[i] !== expected[i]) assert.equal(lines[i], expected[i], `row ${i}`);
    }
    const parsed = parse(text, { columns: true }) as Record<string, string>[];
    assert.equal(parsed[7 * 4]!.name, 'with, comma and "quotes"');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a row longer than an output chunk (a huge tag value) is written whole, between ordinary rows', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-csv-'));
  try {
    const file = join(dir, 'out.csv');
    const csv = new CsvOutput({ fileName: file, saveIntervalMs: 60_000, timeFormat: 'unix' });
    await csv.start();
    const metrics = [new Metric('http_reqs', 'counter', 'default')];
    const huge = { url: `http://127.0.0.1/${'y'.repeat(300 * 1024)}`, name: 'ünïcödé, big' };
    const small = { url: 'http://127.0.0.1/', name: 'small' };
    const containers: SampleContainer[] = [small, huge, small].map((tags, i) => ({
      timeMs: 1_700_000_000_000 + i,
      tags,
      metrics,
      values: [i + 0.5],
    }));
    csv.addMetricSamples(containers);
    await csv.stop();
    const lines = (await readFile(file, 'utf8')).split('\n').slice(1, -1);
    assert.deepEqual(
      lines,
      containers.map((c) => expectedRow('http_reqs', c.timeMs, c.values[0]!, c.tags)),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
