import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetricRegistry } from '../metrics/registry.ts';
import { ScenarioBreakdown } from './scenario-breakdown.ts';
import type { SummaryData } from './summary.ts';
import { formatBytes, formatDuration, renderTextSummary, type TextSummaryInput } from './text-summary.ts';

const STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)'];

function data(
  metrics: SummaryData['metrics'],
  checks: { name: string; passes: number; fails: number }[] = [],
): SummaryData {
  return {
    root_group: {
      name: '',
      path: '',
      id: '',
      groups: [],
      checks: checks.map((c) => ({ ...c, path: `::${c.name}`, id: '' })),
    },
    options: { summaryTrendStats: STATS, summaryTimeUnit: '', noColor: false },
    state: { isStdOutTTY: false, isStdErrTTY: false, testRunDurationMs: 10_000 },
    metrics,
  };
}

const trend = (avg: number, contains = 'time') => ({
  type: 'trend',
  contains,
  values: { avg, min: avg / 2, med: avg, max: avg * 3, 'p(90)': avg * 2, 'p(95)': avg * 2.5 },
});

const METRICS: SummaryData['metrics'] = {
  http_reqs: { type: 'counter', contains: 'default', values: { count: 1924, rate: 27.2995821 } },
  http_req_duration: {
    ...trend(23.96),
    thresholds: { 'p(95)<500': { ok: true } },
  },
  'http_req_duration{expected_response:true}': trend(23.98),
  http_req_waiting: trend(20),
  http_req_failed: { type: 'rate', contains: 'default', values: { rate: 0.00104, passes: 2, fails: 1922 } },
  iterations: { type: 'counter', contains: 'default', values: { count: 1924, rate: 27.2995821 } },
  iteration_duration: trend(525.03),
  vus: { type: 'gauge', contains: 'default', values: { value: 1, min: 1, max: 20 } },
  data_received: { type: 'counter', contains: 'data', values: { count: 769_000, rate: 11_000 } },
  data_sent: { type: 'counter', contains: 'data', values: { count: 359_000, rate: 5_100 } },
  errors: {
    type: 'rate',
    contains: 'default',
    values: { rate: 0.0015, passes: 3, fails: 1921 },
    thresholds: { 'rate<0.01': { ok: true } },
  },
  checks: { type: 'rate', contains: 'default', values: { rate: 0.9992, passes: 3845, fails: 3 } },
  group_duration: trend(5),
};

function input(mode: TextSummaryInput['mode'], extra: Partial<TextSummaryInput> = {}): TextSummaryInput {
  return {
    mode,
    data: data(METRICS, [
      { name: 'status is 200', passes: 1921, fails: 3 },
      { name: 'response time < 500ms', passes: 1924, fails: 0 },
    ]),
    thresholdValues: { http_req_duration: { 'p(95)': 62.49 }, errors: { rate: 0.0015 } },
    ...extra,
  };
}

test('durations and bytes are written as k6 writes them', () => {
  assert.equal(formatDuration(0), '0s');
  assert.equal(formatDuration(0.0005), '500ns');
  assert.equal(formatDuration(0.0075), '7.5µs');
  assert.equal(formatDuration(18.7), '18.7ms');
  assert.equal(formatDuration(105.666), '105.66ms', 'truncated, not rounded');
  assert.equal(formatDuration(4660), '4.66s');
  assert.equal(formatDuration(90_500), '1m30s');
  assert.equal(formatDuration(3_725_000), '1h2m5s');
  assert.equal(formatDuration(0.52, 'ms'), '0.52ms');
  assert.equal(formatDuration(1500, 's'), '1.50s');
  assert.equal(formatDuration(2, 'us'), '2000.00µs');
  assert.equal(formatBytes(7), '7 B');
  assert.equal(formatBytes(718), '718 B');
  assert.equal(formatBytes(4900), '4.9 kB');
  assert.equal(formatBytes(769_000), '769 kB');
  assert.equal(formatBytes(2_400_000), '2.4 MB');
});

test('compact: thresholds first, then checks and the main metrics by category, columns aligned', () => {
  const text = renderTextSummary(input('compact'));
  const lines = text.split('\n');
  const at = (start: string) => lines.findIndex((l) => l.startsWith(start));
  // Sections in k6's order, each title followed by a blank line, two blank lines between sections.
  assert.ok(at('  █ THRESHOLDS ') < at('  █ TOTAL RESULTS '));
  assert.equal(lines[at('  █ TOTAL RESULTS ') - 1], '');
  assert.equal(lines[at('  █ TOTAL RESULTS ') - 2], '');
  assert.match(text, /\n {4}http_req_duration\n {4}✓ 'p\(95\)<500' p\(95\)=62\.49ms\n/);
  assert.match(text, /\n {4}errors\n {4}✓ 'rate<0\.01' rate=0\.15%\n/);
  // Checks: their own block, its names dotted to its own width.
  assert.match(text, /\n {4}checks_total\.{7}: 3848 {3}384\.8\/s\n/);
  assert.match(text, /\n {4}checks_succeeded\.{3}: 99\.92% 3845 out of 3848\n/);
  assert.match(text, /\n {4}checks_failed\.{6}: 0\.07% {2}3 out of 3848\n/);
  assert.match(text, /\n {4}✗ status is 200\n {6}↳ {2}99% — ✓ 1921 \/ ✗ 3\n {4}✓ response time < 500ms\n/);
  // Categories: CUSTOM first, then HTTP, EXECUTION, NETWORK.
  const order = ['    CUSTOM', '    HTTP', '    EXECUTION', '    NETWORK'].map(at);
  assert.deepEqual(
    [...order].sort((a, b) => a - b),
    order,
  );
  assert.ok(order.every((i) => i > 0));
  // Compact leaves out the request phases, checks and group_duration.
  assert.ok(!/http_req_waiting|group_duration|\n {4}checks\./.test(text), text);
  // One name width for every metric line (the sub-metric's indented name is the widest).
  assert.match(text, /\n {4}http_req_duration\.{14}: avg=23\.96ms {2}min=11\.98ms/);
  assert.match(text, /\n {6}\{ expected_response:true \}\.{3}: avg=23\.98ms/);
  assert.match(text, /\n {4}errors\.{25}: 0\.15% {2}3 out of 1924\n/);
  // Plain values in columns across categories: counts, rates, gauges and bytes.
  assert.match(text, /\n {4}http_reqs\.+: 1924 {3}27\.299582\/s\n/);
  assert.match(text, /\n {4}vus\.+: 1 {6}min=1 {9}max=20\n/);
  assert.match(text, /\n {4}data_received\.+: 769 kB 11 kB\/s\n/);
  assert.match(text, /\n {4}data_sent\.+: 359 kB 5\.1 kB\/s\n/);
});

test('full: every metric but checks and group_duration, then a section per scenario with its groups', () => {
  const registry = new MetricRegistry();
  const breakdown = new ScenarioBreakdown();
  const reqs = registry.builtin('http_reqs');
  const duration = registry.builtin('http_req_duration');
  const checks = registry.builtin('checks');
  const emit = (tags: Record<string, string>, metrics: (typeof reqs)[], values: number[]) =>
    breakdown.add({ timeMs: 0, tags, metrics, values });
  emit({ scenario: 'left', group: '' }, [reqs, duration], [1, 120]);
  emit({ scenario: 'left', group: '::crocodiles' }, [reqs, duration], [1, 130]);
  emit({ scenario: 'left', group: '::crocodiles', check: 'crocodile exists' }, [checks], [1]);
  emit({ scenario: 'right', group: '' }, [reqs, duration], [1, 50]);
  emit({ group: '::setup' }, [reqs], [1]);
  const text = renderTextSummary(input('full', { scenarios: breakdown.scenarios }));
  assert.match(text, /\n {4}http_req_waiting\.+: avg=20ms/);
  assert.ok(!/group_duration|\n {4}checks\./.test(text));
  const left = text.indexOf('  █ SCENARIO: left \n');
  const right = text.indexOf('  █ SCENARIO: right \n');
  assert.ok(left > text.indexOf('TOTAL RESULTS') && right > left, text);
  const leftText = text.slice(left, right);
  // The scenario holds all its samples, its group those made inside it.
  assert.match(leftText, /\n {4}http_reqs\.+: 2 +0\.2\/s\n/);
  assert.match(leftText, /\n {4}↳ GROUP: crocodiles \n\n {6}checks_total\.+: 1 /);
  assert.match(leftText, /\n {6}✓ crocodile exists\n/);
  assert.match(leftText, /\n {6}http_reqs\.+: 1 +0\.1\/s\n/);
  assert.match(text.slice(right), /\n {4}http_reqs\.+: 1 +0\.1\/s\n/);
  // Samples outside any scenario (setup) are in the totals only.
  assert.ok(!text.includes('SCENARIO: undefined'));
});

test('legacy: the pre-v1 layout, checks first and thresholds marked on their metric', () => {
  const text = renderTextSummary(input('legacy'));
  assert.match(text, /^\n {5}✗ status is 200\n {6}↳ {2}99% — ✓ 1921 \/ ✗ 3\n {5}✓ response time < 500ms\n\n/);
  assert.match(text, /\n {3}✓ http_req_duration\.+: avg=23\.96ms/);
  // A sub-metric sits under its parent, its mark column empty without thresholds of its own.
  assert.match(text, /\n {7}\{ expected_response:true \}\.+: avg=23\.98ms/);
  assert.match(text, /\n {5}checks\.+: 99\.92% 3845 out of 3848\n/);
  assert.match(text, /\n {5}group_duration\.+: avg=5ms/);
  assert.match(text, /\n {5}http_req_waiting\.+: avg=20ms/);
  assert.ok(!text.includes('█ TOTAL RESULTS'));
});
