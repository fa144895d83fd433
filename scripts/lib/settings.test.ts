import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDuration, parseSeconds, SettingsError, SettingsReader } from './settings.ts';

test('durations: plain numbers are seconds, Go-style units are accepted', () => {
  const cases: [string, number | undefined][] = [
    ['20', 20],
    ['0.5', 0.5],
    ['20s', 20],
    ['500ms', 0.5],
    ['1m30s', 90],
    ['2h', 7200],
    ['-1', undefined], // negative
    ['ten', undefined],
    ['20 s', undefined],
    ['', undefined],
  ];
  for (const [raw, seconds] of cases) assert.equal(parseSeconds(raw), seconds, raw);
  assert.equal(formatDuration(18), '18s');
  assert.equal(formatDuration(1.5), '1500ms');
});

test('increasing lists: strictly increasing positive numbers only', () => {
  const read = (raw: string) => {
    const r = new SettingsReader({ STEPS: raw });
    const value = r.increasingList('STEPS', [1]);
    return {
      value,
      error: (() => {
        try {
          r.check();
          return undefined;
        } catch (e) {
          return e as SettingsError;
        }
      })(),
    };
  };
  assert.deepEqual(read('20,40,60').value, [20, 40, 60]);
  assert.deepEqual(read(' 5, 10 ').value, [5, 10]);
  for (const bad of ['40,20', '20,20', '0,10', '-5,10', '10,abc', '10,,20', '2.5,10']) {
    const { error } = read(bad);
    assert.ok(error instanceof SettingsError, `${bad} is rejected`);
    assert.match(error.message, /STEPS: .*strictly increasing positive/);
  }
});

test('step lists: rates climb, and a lower rate repeats a step already run', () => {
  const read = (raw: string) => {
    const r = new SettingsReader({ STEPS: raw });
    const value = r.stepList('STEPS', [1]);
    try {
      r.check();
      return { value, error: undefined };
    } catch (e) {
      return { value, error: e as SettingsError };
    }
  };
  assert.deepEqual(read('20,40,60').value, [20, 40, 60]);
  // The decisive steps 60 and 70 again, after a step past them and a low one.
  assert.deepEqual(read('20,40,60,70,90,20,60,70').value, [20, 40, 60, 70, 90, 20, 60, 70]);
  for (const bad of ['40,20', '20,40,30', '0,10', '10,abc', '2.5,10']) {
    const { error } = read(bad);
    assert.ok(error instanceof SettingsError, `${bad} is rejected`);
    assert.match(error.message, /STEPS: .*a lower rate repeats an earlier step/);
  }
  assert.match(read('20,40,30').error!.message, /30 is below 40 before it and was not run before/);
});

test('numbers: ranges and whole numbers are enforced, unset means the default', () => {
  const r = new SettingsReader({ A: '5', B: '0', C: '2.5', D: 'x', E: '' });
  assert.equal(r.number('A', 1, { min: 1 }), 5);
  assert.equal(r.number('B', 1, { min: 1 }), 1);
  assert.equal(r.number('C', 1, { integer: true }), 1);
  assert.equal(r.number('D', 7), 7);
  assert.equal(r.number('E', 9), 9, 'empty is unset');
  assert.equal(r.number('UNSET', 3), 3);
  assert.throws(
    () => r.check(),
    (e: unknown) => e instanceof SettingsError && e.problems.length === 3,
  );
});
