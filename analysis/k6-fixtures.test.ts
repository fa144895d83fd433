// Every real k6 file in ../shared/fixtures/k6-real parses, with counts checked independently.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { k6RealFixtures } from '../test/helpers/shared-fixtures.ts';
import { openText } from './client-files.ts';
import type { ClientSample } from './client-sample.ts';
import { readK6Csv } from './k6-csv.ts';
import { readK6Ndjson } from './k6-ndjson.ts';

const DIR = k6RealFixtures();

/** Counts http_reqs rows and their statuses with csv-parse's sync API: another code path. */
function independentCsvCounts(file: string): { requests: number; statuses: Record<string, number> } {
  const text = readFileSync(`${DIR}${file}`, 'latin1').replaceAll('\0', '');
  const rows = parse(text, {
    columns: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_records_with_error: true,
  }) as Record<string, string>[];
  const statuses: Record<string, number> = {};
  let requests = 0;
  for (const row of rows) {
    if (row.metric_name !== 'http_reqs') continue;
    requests++;
    statuses[row.status ?? ''] = (statuses[row.status ?? ''] ?? 0) + 1;
  }
  return { requests, statuses };
}

async function streamedCounts(file: string, reader: typeof readK6Csv) {
  const statuses: Record<string, number> = {};
  let requests = 0;
  const samples: ClientSample[] = [];
  const stats = await reader(await openText(`${DIR}${file}`), (s) => {
    if (s.metric !== 'http_reqs') return;
    requests++;
    statuses[s.status ?? ''] = (statuses[s.status ?? ''] ?? 0) + 1;
    if (samples.length < 5) samples.push(s);
  });
  return { requests, statuses, stats, samples };
}

const CSV_FILES: [string, number, Record<string, number> | undefined][] = [
  // file, http_reqs counted by hand where the SOURCES.md states it, statuses
  ['k6-v0.26_2020_csv_legacy-header_url-grouping.csv', 1001, { '200': 1001 }], // 15 columns, no scenario
  ['k6-v0.31_2021_csv_groups_trello.csv', 0, undefined],
  ['k6-v0.31_2021_csv_timeouts-status0-failed-checks.csv', 0, undefined],
  ['k6-v0.3x_2022_csv_extra-tags_groups_redirects_NUL-block.csv', 0, undefined],
  ['k6-v0.43_2023_csv_metadata-col_named-scenarios_quoted-checks.csv', 0, undefined],
];

for (const [file, statedRequests, statedStatuses] of CSV_FILES) {
  test(`CSV ${file}: request and status counts match an independent count`, async () => {
    const expected = independentCsvCounts(file);
    const got = await streamedCounts(file, readK6Csv);
    assert.ok(got.requests > 0, 'has requests');
    assert.equal(got.requests, expected.requests);
    assert.deepEqual(got.statuses, expected.statuses);
    if (statedRequests) assert.equal(got.requests, statedRequests);
    if (statedStatuses) assert.deepEqual(got.statuses, statedStatuses);
    assert.ok(
      got.samples.every((s) => Number.isFinite(s.timeS) && s.timeS > 1.5e9),
      'timestamps in epoch seconds',
    );
  });
}

test('the NUL-block file: NULs are stripped and counted, nothing throws', async () => {
  const got = await streamedCounts('k6-v0.3x_2022_csv_extra-tags_groups_redirects_NUL-block.csv', readK6Csv);
  assert.equal(got.stats.nulBytes, 238_025);
  assert.ok(
    got.statuses['0']! > 0 && got.statuses['301']! > 0 && got.statuses['302']! > 0,
    JSON.stringify(got.statuses),
  );
});

test('the timeouts file: status 0 with error_code 1000 (context deadline exceeded)', async () => {
  const codes = new Set<string | undefined>();
  await readK6Csv(await openText(`${DIR}k6-v0.31_2021_csv_timeouts-status0-failed-checks.csv`), (s) => {
    if (s.metric === 'http_reqs') codes.add(`${s.status}/${s.errorCode}`);
  });
  assert.deepEqual([...codes], ['0/1000']);
});

/** Counts Point lines of http_reqs and their statuses by plain JSON.parse per line. */
function independentNdjsonCounts(file: string) {
  const statuses: Record<string, number> = {};
  let requests = 0;
  for (const line of readFileSync(`${DIR}${file}`, 'utf8').split('\n')) {
    if (!line.includes('"Point"') || !line.includes('"http_reqs"')) continue;
    const point = JSON.parse(line);
    if (point.metric !== 'http_reqs') continue;
    requests++;
    const status = point.data.tags?.status ?? '';
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  return { requests, statuses };
}

for (const file of [
  'k6-v0.31_2021_ndjson_legacy-envelope_trello.ndjson',
  'k6-v0.46_2023_ndjson_xk6-dashboard-testdata.ndjson',
  'k6-v0.5x_2024_ndjson_scenario_abortOnFail-thresholds.ndjson',
]) {
  test(`NDJSON ${file}: request and status counts match an independent count`, async () => {
    const expected = independentNdjsonCounts(file);
    const got = await streamedCounts(file, readK6Ndjson);
    assert.ok(got.requests > 0);
    assert.equal(got.requests, expected.requests);
    assert.deepEqual(got.statuses, expected.statuses);
  });
}

test('the abortOnFail NDJSON: its 9 samples with status 502 are one request', async () => {
  let samples502 = 0;
  const got = await streamedCounts(
    'k6-v0.5x_2024_ndjson_scenario_abortOnFail-thresholds.ndjson',
    (input, on) =>
      readK6Ndjson(input, (s) => {
        if (s.status === '502') samples502++;
        on(s);
      }),
  );
  assert.equal(samples502, 9, 'the nine http_req* samples of one request');
  assert.equal(got.statuses['502'], 1);
});
