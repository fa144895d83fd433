import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  declaredFieldReadings,
  declaredMeterName,
  parseDeclaredResources,
  parseSelector,
  selectorMatches,
} from './declared-resources.ts';

test('plain selectors are parsed; anything else is PromQL for a server', () => {
  const cases: [string, ReturnType<typeof parseSelector>][] = [
    // a bare name
    ['pool_in_use', { name: 'pool_in_use', matchers: {} }],
    // equality matchers, either quote, spaces and a trailing comma
    [
      ' pool_in_use{ pool = "orders", zone=\'a\', } ',
      { name: 'pool_in_use', matchers: { pool: 'orders', zone: 'a' } },
    ],
    // an escaped quote in a value
    ['m{q="say \\"hi\\""}', { name: 'm', matchers: { q: 'say "hi"' } }],
    // a recording rule's name has colons
    ['job:pool_in_use:sum', { name: 'job:pool_in_use:sum', matchers: {} }],
    // regex and negative matchers, functions, arithmetic, comparisons: PromQL
    ['pool_in_use{pool=~"ord.*"}', null],
    ['pool_in_use{pool!="x"}', null],
    ['sum(pool_in_use)', null],
    ['rate(cpu_seconds_total[30s])', null],
    ['pool_in_use / 2', null],
    ['pool_in_use{pool="a"} > 0', null],
  ];
  for (const [expr, expected] of cases) assert.deepEqual(parseSelector(expr), expected, expr);
});

test('a selector matches samples of its name carrying every matcher', () => {
  const selector = parseSelector('q{pool="orders"}')!;
  const cases: [Parameters<typeof selectorMatches>[1], boolean][] = [
    [{ name: 'q', labels: { pool: 'orders', instance: 'a' }, value: 1 }, true], // extra labels do not matter
    [{ name: 'q', labels: { pool: 'billing' }, value: 1 }, false], // another value
    [{ name: 'q', labels: {}, value: 1 }, false], // label absent
    [{ name: 'r', labels: { pool: 'orders' }, value: 1 }, false], // another name
  ];
  for (const [sample, expected] of cases) assert.equal(selectorMatches(selector, sample), expected);
  // PromQL's rule: a matcher on "" matches a series without the label.
  assert.equal(selectorMatches(parseSelector('q{zone=""}')!, { name: 'q', labels: {}, value: 1 }), true);
});

test('declared meter names are safe metric names, distinct per resource and field', () => {
  assert.equal(declaredMeterName('Orders pool', 'inUse'), 'plateau_declared:orders_pool:inUse');
  assert.equal(declaredMeterName('bus-executor.v2', 'depth'), 'plateau_declared:bus_executor_v2:depth');
  assert.match(declaredMeterName('ü x', 'max'), /^[a-zA-Z_:][a-zA-Z0-9_:]*$/);
});

test('valid resources come back with their defaults, each field read as a selector or PromQL', () => {
  const { resources, problems } = parseDeclaredResources([
    {
      name: 'orders pool',
      kind: 'slots',
      inUse: 'pool_in_use{pool="orders"}',
      max: 'pool_max',
      waiting: 'sum(w)',
    },
    {
      name: 'render queue',
      kind: 'queue',
      depth: 'render_queue_depth',
      cap: 'render_queue_cap',
      position: 0,
    },
    { name: 'worker cpu', kind: 'cpu', inUse: 'worker_cpu_seconds_total', role: 'cpu', onFull: 'queues' },
  ]);
  assert.deepEqual(problems, []);
  assert.deepEqual(resources, [
    {
      name: 'orders pool',
      kind: 'slots',
      role: 'pool',
      position: 1,
      onFull: 'unknown',
      inUse: 'pool_in_use{pool="orders"}',
      max: 'pool_max',
      waiting: 'sum(w)',
    },
    {
      name: 'render queue',
      kind: 'queue',
      role: 'queue',
      position: 0,
      onFull: 'unknown',
      depth: 'render_queue_depth',
      cap: 'render_queue_cap',
    },
    {
      name: 'worker cpu',
      kind: 'cpu',
      role: 'cpu',
      position: 1,
      onFull: 'queues',
      inUse: 'worker_cpu_seconds_total',
    },
  ]);
  assert.deepEqual(
    declaredFieldReadings(resources[0]!).map((f) => [f.field, f.selector.name, f.promql, f.counter]),
    [
      ['inUse', 'pool_in_use', false, false],
      ['max', 'pool_max', false, false],
      ['waiting', 'plateau_declared:orders_pool:waiting', true, false], // PromQL: the Prometheus source's result
    ],
  );
  // a _total selector is a counter: cores busy are its increase per second
  assert.deepEqual(
    declaredFieldReadings(resources[2]!).map((f) => [f.field, f.counter]),
    [['inUse', true]],
  );
});

test('every problem at once, each with the setting, what is wrong and a hint', () => {
  const { resources, problems } = parseDeclaredResources([
    { name: 'a', kind: 'slots', max: 'm' }, // slots without inUse
    { name: 'b', kind: 'queue', depth: 'd', inUse: 'x' }, // a field of another kind
    { name: '', kind: 'pool', inUse: 'x' }, // no name, a kind that does not exist
    { name: 'c', kind: 'cpu', inUse: 'rate(x[1m]', maxx: '4' }, // unbalanced PromQL, a typo
    { name: 'A', kind: 'cpu', inUse: 42 }, // "A" reads as "a"; a number for a series
    { name: 'd', kind: 'slots', inUse: 'x{pool="a}', position: -1, role: 'disk' }, // unclosed quote
    'just a string',
  ]);
  assert.deepEqual(resources, []);
  assert.deepEqual(
    problems.map((p) => [p.setting, p.message]),
    [
      ['resources[0].inUse', 'a slots resource needs inUse'],
      ['resources[1].inUse', 'a queue resource has no inUse'],
      ['resources[2].name', 'must be a non-empty string, got ""'],
      ['resources[2].kind', 'must be one of slots, queue, cpu, got "pool"'],
      ['resources[3].maxx', 'is not a field of a resource'],
      ['resources[3].inUse', '"rate(x[1m]" has an unclosed ('],
      ['resources[4].name', '"A" and "a" read as the same name (a)'],
      ['resources[4].inUse', 'must be a metric selector or a PromQL expression, got 42'],
      ['resources[5].role', 'must be one of pool, threads, queue, cpu, database, got "disk"'],
      ['resources[5].position', 'must be a number ≥ 0, got -1'],
      ['resources[5].inUse', '"x{pool=\\"a}" has an unclosed "'],
      ['resources[6]', 'must be an object, got "just a string"'],
    ],
  );
  for (const p of problems) assert.ok(p.hint.length > 0, `${p.setting} has a hint`);
  assert.equal(problems[1]!.hint, 'a queue resource reads depth and cap');
});

test('no resources configured is no problem; a value that is not a list is one', () => {
  assert.deepEqual(parseDeclaredResources(undefined), { resources: [], problems: [] });
  const { problems } = parseDeclaredResources({ name: 'x' });
  assert.deepEqual(
    problems.map((p) => [p.setting, p.message]),
    [['resources', 'must be a list, got an object']],
  );
});
