// Golden files for the rendered record and tables. UPDATE_GOLDEN=1 rewrites them.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { AnalysisResult, RunManifest, SaturationRow } from '../contract/index.ts';
import { renderRecord, renderTableMarkdown, renderTableText } from './render.ts';
import { loadTemplates } from './templates.ts';

const templates = await loadTemplates();

import { decideVerdict } from './verdict.ts';

const GOLDEN = fileURLToPath(new URL('../test/fixtures/golden/', import.meta.url));

function golden(name: string, actual: string): void {
  const path = `${GOLDEN}${name}`;
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(path, actual);
  assert.equal(
    actual,
    readFileSync(path, 'utf8'),
    `${name} differs from its golden file (UPDATE_GOLDEN=1 to accept)`,
  );
}

const base = (
  step: string,
  offered: number | null,
  served: number,
  pool: number,
  extra: Partial<SaturationRow> = {},
): SaturationRow => ({
  step,
  offeredPerSec: offered,
  sentPerSec: offered ?? served,
  servedPerSec: served,
  servedSource: 'server',
  seconds: 20,
  requests: Math.round((offered ?? served) * 20),
  latencyMs: { med: 54.2, p95: 58.9, p99: 63.1, max: 80.4 },
  failures: { shed: 0, rateLimited: 0, serverErrors: 0, clientErrors: 0, timeouts: 0, networkErrors: 0 },
  failureRate: 0,
  dropped: 0,
  generator: { lagMsMax: 1.2, cpuPctMax: 12 },
  server: {
    checkedOutPct: pool,
    eventLoopUtilization: 0.25,
    waitingMean: 0,
    waitingMax: 0,
    waitP95Ms: 0.2,
    queryP95Ms: 51.3,
    cpuPct: 21,
  },
  invalid: null,
  ...extra,
});

const saturated = {
  waitingMean: 7.6,
  waitingMax: 8,
  waitP95Ms: 182.5,
  queryP95Ms: 51.1,
  cpuPct: 24,
  eventLoopUtilization: 0.31,
};
const rows: SaturationRow[] = [
  base('r020', 20, 20, 27),
  base('r040', 40, 39.9, 54),
  base('r060', 60, 59.1, 82),
  base('r070', 70, 61.8, 99.4, {
    server: { checkedOutPct: 99.4, ...saturated },
    failures: { shed: 164, rateLimited: 0, serverErrors: 0, clientErrors: 0, timeouts: 0, networkErrors: 0 },
    failureRate: 0.117,
    latencyMs: { med: 210.3, p95: 248.8, p99: 256.1, max: 262 },
  }),
  base('r080', 80, 61.9, 100, {
    server: { checkedOutPct: 100, ...saturated },
    dropped: 3,
    invalid: 'the generator dropped 3 iterations',
  }),
  base('drain', null, 30.2, 40),
  base('recovery', null, 50, 70),
];

const manifest = {
  id: '20261201-101500-ab12',
  target: 'http://127.0.0.1:3366',
  load: { jitterSeconds: 0, p95Ms: 250, failRate: 0.01 },
  service: { POOL_MAX: 4, QUEUE_MAX: 8, ACQUIRE_TIMEOUT_MS: 200, QUERY_MS: 50, PAYLOAD_KB: 88, SHED: true },
} as unknown as RunManifest;

const analysis: AnalysisResult = {
  kind: 'plateau.analysis',
  schemaVersion: 1,
  runId: manifest.id,
  sources: { client: 'k6.csv.gz', server: 'server.json', manifest: 'run.json' },
  objectives: { p95Ms: 250, failRate: 0.01 },
  table: rows,
  verdict: decideVerdict({
    rows,
    settings: { poolMax: 4, queueMax: 8, acquireTimeoutMs: 200, shed: true, extra: {} },
    timeline: [
      {
        t: 1,
        step: 'r080',
        served: 62,
        shed: 18,
        checkedOutMean: 4,
        waitingMean: 8,
        waitingMax: 8,
        cpuPct: 24,
      },
      {
        t: 2,
        step: 'drain',
        served: 60,
        shed: 0,
        checkedOutMean: 4,
        waitingMean: 3,
        waitingMax: 5,
        cpuPct: 20,
      },
      {
        t: 3,
        step: 'drain',
        served: 40,
        shed: 0,
        checkedOutMean: 2,
        waitingMean: 0,
        waitingMax: 0,
        cpuPct: 10,
      },
    ],
    objectives: { p95Ms: 250, failRate: 0.01 },
    database: {
      kind: 'embedded',
      serverVersion: '18.4',
      maxConnections: 100,
      superuserReservedConnections: 3,
      reservedConnections: 0,
      ordinarySlots: 97,
    },
    recoveryRatePerSec: 50,
  }),
};

test('the capacity record renders in the documented shape', () => {
  const record = renderRecord(templates, analysis, manifest);
  golden('record.txt', record);
  const labels = record
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(':')[0]);
  assert.deepEqual(labels.slice(0, 13), [
    'service',
    'workload',
    'first limit',
    'predicted',
    'knee',
    'evidence',
    'confirmed by',
    'safe limit',
    'overload',
    'recovery',
    'database',
    'next limit',
    'scale on',
  ]);
});

test('a confirmed record carries its confirming line', () => {
  assert.match(
    renderRecord(templates, analysis, manifest, 'POOL_MAX 4 -> 8 alone moved the plateau to 124/s (2.0x)'),
    /confirmed by: {2}POOL_MAX 4 -> 8 alone/,
  );
});

test('the saturation table renders as Markdown and as aligned text', () => {
  golden('table.md', renderTableMarkdown(templates, rows));
  const text = renderTableText(rows);
  golden('table.txt', text);
  const widths = new Set(
    text
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('!'))
      .map((l) => l.length),
  );
  assert.equal(widths.size, 1, 'every line of the text table has the same width');
});
