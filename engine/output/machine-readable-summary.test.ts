import assert from 'node:assert/strict';
import { test } from 'node:test';
import { machineReadableSummary } from './machine-readable-summary.ts';
import type { SummaryData } from './summary.ts';

const data: SummaryData = {
  root_group: {
    name: '',
    path: '',
    id: '',
    checks: [{ name: 'root check', path: '::root check', id: '', passes: 2, fails: 0 }],
    groups: [
      {
        name: 'g',
        path: '::g',
        id: '',
        groups: [],
        checks: [{ name: 'inner', path: '::g::inner', id: '', passes: 1, fails: 1 }],
      },
    ],
  },
  options: { summaryTrendStats: ['avg', 'p(99)', 'count'], summaryTimeUnit: '', noColor: false },
  state: { isStdOutTTY: false, isStdErrTTY: false, testRunDurationMs: 2500 },
  metrics: {
    vus: { type: 'gauge', contains: 'default', values: { value: 3, min: 1, max: 5 } },
    iteration_duration: { type: 'trend', contains: 'time', values: { avg: 12, 'p(99)': 30, count: 4 } },
    checks: { type: 'rate', contains: 'default', values: { rate: 0.75, passes: 3, fails: 1 } },
    group_duration: { type: 'trend', contains: 'time', values: { avg: 1 } },
    http_req_waiting: { type: 'trend', contains: 'time', values: { avg: 1 } },
  },
};

test('the machine-readable summary: schema 1.0.0 values per type, checks flattened, k6 v1 metric list', () => {
  const summary = machineReadableSummary(data, 'full', '/tmp/script.js', new Date('2026-12-01T10:00:00Z'));
  assert.deepEqual(summary.config, { duration: 2.5, execution: 'local', script: 'file:///tmp/script.js' });
  assert.equal(summary.metadata.generated_at, '2026-12-01T10:00:00.000Z');
  assert.equal(summary.version, '1.0.0');
  assert.deepEqual(summary.results.checks.results, [
    { name: 'root check', passes: 2, fails: 0 },
    { name: 'inner', passes: 1, fails: 1 },
  ]);
  assert.deepEqual(summary.results.checks.metrics[1], {
    name: 'checks_failed',
    type: 'rate',
    contains: 'default',
    values: { matches: 1, rate: 0.25, total: 4 },
  });
  const byName = Object.fromEntries(summary.results.metrics.map((m) => [m.name, m.values]));
  // Full mode lists the request phases; checks and group_duration are never in the list.
  assert.deepEqual(Object.keys(byName), ['http_req_waiting', 'iteration_duration', 'vus']);
  assert.deepEqual(byName.vus, { max: 5, min: 1, value: 3 });
  // Trends keep only the schema's statistics (avg, max, med, min, p(90), p(95)) that were computed.
  assert.deepEqual(byName.iteration_duration, { avg: 12 });
  const compact = machineReadableSummary(data, 'compact', '/tmp/script.js');
  assert.ok(!compact.results.metrics.some((m) => m.name === 'http_req_waiting'));
});
