import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetricRegistry } from './registry.ts';
import { CounterSink, RateSink, TrendSink } from './sinks.ts';
import { aggregate, holds, parseSelector, parseThreshold, type Threshold } from './thresholds.ts';

const parsed = (type: 'counter' | 'gauge' | 'rate' | 'trend', source: string) =>
  parseThreshold('m', type, source);

test('threshold expressions: aggregation, operator (first of <= < >= > === == != found) and bound', () => {
  const t = parsed('trend', 'p(95) < 250') as Threshold;
  assert.equal(t.aggregation, 'p(95)');
  assert.equal(t.operator, '<');
  assert.equal(t.bound, 250);
  assert.equal((parsed('counter', 'count==0') as Threshold).operator, '==');
  assert.equal((parsed('rate', 'rate<=0.01') as Threshold).operator, '<=');
  assert.equal((parsed('trend', 'p(99.9)<1000') as Threshold).aggregation, 'p(99.9)');
});

test('a wrong aggregation for the metric type, or a malformed expression, is a problem naming the fix', () => {
  const cases: ['counter' | 'gauge' | 'rate' | 'trend', string, RegExp][] = [
    ['rate', 'p(95)<1', /use rate/],
    ['counter', 'avg<1', /use count, rate/],
    ['trend', 'p(101)<1', /0 <= N <= 100/],
    ['trend', 'p95<1', /avg, min, max, med, p\(N\)/],
    ['trend', 'avg 1', /operator/],
    ['trend', 'avg<abc', /number/],
  ];
  for (const [type, source, hint] of cases) {
    const result = parsed(type, source);
    assert.ok('setting' in result, source);
    assert.match(`${result.message} ${result.hint}`, hint, source);
  }
});

test('aggregations read k6 values: empty rate has no rate (passes), empty trend reads 0', () => {
  const trend = new TrendSink();
  for (const v of [10, 20, 30, 40, 50]) trend.add(v);
  assert.equal(aggregate(trend, 'p(95)', 1), 48); // index 0.95·4 = 3.8 → 40 + 0.8·10
  assert.equal(aggregate(trend, 'med', 1), 30);
  assert.equal(aggregate(trend, 'avg', 1), 30);
  assert.equal(aggregate(new TrendSink(), 'p(95)', 1), 0);
  assert.equal(aggregate(new RateSink(), 'rate', 1), undefined);
  const counter = new CounterSink();
  counter.add(30);
  assert.equal(aggregate(counter, 'rate', 10), 3);
  assert.equal(holds(3, '<', 3), false);
  assert.equal(holds(3, '<=', 3), true);
  assert.equal(holds(0, '==', 0), true);
});

test('sub-metric selectors split on commas and at the first colon, trimming spaces and quotes', () => {
  assert.deepEqual(parseSelector('http_req_duration{step:r020}'), {
    metric: 'http_req_duration',
    suffix: 'step:r020',
    tags: [['step', 'r020']],
  });
  assert.deepEqual(parseSelector('checks{ group : \'::g\', scenario:"s" }')?.valueOf(), {
    metric: 'checks',
    suffix: 'group:::g,scenario:s',
    tags: [
      ['group', '::g'],
      ['scenario', 's'],
    ],
  });
  assert.deepEqual(parseSelector('group_duration{group:::a::b}'), {
    metric: 'group_duration',
    suffix: 'group:::a::b',
    tags: [['group', '::a::b']],
  });
  assert.equal(parseSelector('http_reqs'), undefined);
  assert.ok('setting' in (parseSelector('http_reqs{step:r020') as object), 'unclosed brace');
});

test('trend percentiles interpolate like k6 after unsorted adds', () => {
  const trend = new TrendSink();
  for (const v of [5, 1, 4, 2, 3]) trend.add(v);
  assert.equal(trend.percentile(0), 1);
  assert.equal(trend.percentile(100), 5);
  assert.equal(trend.percentile(90), 4.6);
  assert.equal(trend.min, 1);
  assert.equal(trend.max, 5);
});

test('a threshold selecting on vu or iter is kept but warned about: those are metadata and match no sample', () => {
  const registry = new MetricRegistry();
  const warnings = registry.applyThresholds({
    'http_req_duration{vu:1}': ['p(95)<100'],
    'iterations{iter:0,scenario:a}': ['count>0'],
    'http_req_duration{status:200}': ['p(95)<100'],
  });
  assert.equal(warnings.length, 2);
  assert.match(warnings[0]!, /thresholds\["http_req_duration\{vu:1\}"\]: vu is sample metadata/);
  assert.match(warnings[1]!, /iter is sample metadata/);
  const sub = registry.builtin('http_req_duration').submetrics.find((s) => s.suffix === 'vu:1');
  assert.ok(sub, 'the threshold stays, as in k6');
});
