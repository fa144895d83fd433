import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkResults, runScript, writeScript } from '../../../test/helpers/engine.ts';

test('a check callback that throws is a failed check, with its tags, before the exception ends the iteration', async () => {
  const script = await writeScript(`
import { check, group } from 'k6';
import { Counter } from 'k6/metrics';
const reached = new Counter('reached_after_check');
export const options = { iterations: 2 };
export default function () {
  group('g', () => {
    check({}, {
      'runs first': () => true,
      'reads a missing field': (r) => r.cookies.name === 'x',
      'never runs': () => true,
    }, { kind: 'thrower' });
    reached.add(1);
  });
}`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, 'an iteration error does not fail the test');
  // k6 stops at the check that threw: the ones after it are neither run nor counted.
  assert.deepEqual(checkResults(run.rows), { 'runs first': [2, 0], 'reads a missing field': [0, 2] });
  const failed = run.rows.filter((r) => r.metric_name === 'checks' && r.check === 'reads a missing field');
  for (const row of failed) {
    assert.equal(row.group, '::g');
    assert.match(row.extra_tags ?? '', /(^|&)kind=thrower(&|$)/);
  }
  assert.equal(
    run.rows.filter((r) => r.metric_name === 'reached_after_check').length,
    0,
    'the exception propagates out of check()',
  );
  const root = run.exported?.root_group as {
    groups: Record<string, { checks: Record<string, { passes: number; fails: number }> }>;
  };
  const thrower = root.groups.g?.checks['reads a missing field'];
  assert.deepEqual([thrower?.passes, thrower?.fails], [0, 2], 'the group tree counts it failed');
  assert.equal(root.groups.g?.checks['never runs'], undefined);
  const errors = run.logs.filter((l) => l.startsWith('error') && l.includes('"source":"stacktrace"'));
  assert.equal(errors.length, 2, run.logs.join('\n'));
  assert.match(errors[0]!, /TypeError: Cannot read properties of undefined \(reading 'name'\)/);
  assert.equal(run.rows.filter((r) => r.metric_name === 'iterations').length, 2, 'both iterations ended');
});

test('a check that does not throw still returns whether every condition held', async () => {
  const script = await writeScript(`
import { check } from 'k6';
import { Counter } from 'k6/metrics';
const results = new Counter('results');
export const options = { iterations: 1 };
export default function () {
  results.add(check(1, { one: (v) => v === 1 }) ? 1 : 0, { which: 'all' });
  results.add(check(1, { one: (v) => v === 1, two: (v) => v === 2 }) ? 1 : 0, { which: 'some' });
}`);
  const run = await runScript(script);
  const value = (which: string) =>
    run.rows.find((r) => r.metric_name === 'results' && r.extra_tags?.includes(`which=${which}`))
      ?.metric_value;
  assert.equal(value('all'), '1.000000');
  assert.equal(value('some'), '0.000000');
});
