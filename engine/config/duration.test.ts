import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDurationNs } from './duration.ts';

test('k6 durations: Go strings, days, and bare numbers as milliseconds', () => {
  const cases: [unknown, number | undefined][] = [
    ['30s', 30e9],
    ['1m30s', 90e9],
    ['500ms', 500e6],
    ['1.5s', 1.5e9],
    ['2h', 7200e9],
    ['1d', 86_400e9],
    ['250us', 250e3],
    ['0', 0],
    ['100', 100e6], // a bare number in a string is ms
    [250, 250e6], // a number is ms
    ['', undefined],
    ['10 s', undefined],
    ['-5s', undefined],
    ['abc', undefined],
    [null, undefined],
  ];
  for (const [input, ns] of cases) assert.equal(parseDurationNs(input), ns, JSON.stringify(input));
});
