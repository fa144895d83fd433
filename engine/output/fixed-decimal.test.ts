import assert from 'node:assert/strict';
import { test } from 'node:test';
import { writeFixed6 } from './fixed-decimal.ts';

function fixed6(value: number): string {
  const buffer = Buffer.alloc(64);
  return buffer.toString('latin1', 0, writeFixed6(buffer, 0, value));
}

test('writeFixed6 writes what toFixed(6) writes, at the edges', () => {
  const edges = [
    0,
    -0,
    1,
    -1,
    0.5,
    0.0000005,
    0.0000015,
    0.0000004999,
    -0.0000001,
    -0.0000005,
    1.0000005,
    0.1234565,
    2.5e-7,
    123.456789,
    9.999999,
    9.9999995,
    9.99999951,
    1e-9,
    42,
    1_000_000,
    2 ** 53,
    2 ** 53 + 2,
    9_007_199_254.740992,
    99_999.9999995,
    1e11,
    1e15,
    1.5e15,
    1e21,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
  ];
  for (const value of edges) assert.equal(fixed6(value), value.toFixed(6), `value ${value}`);
});

test('writeFixed6 writes what toFixed(6) writes, for 200,000 random values of every magnitude', () => {
  // A fixed-seed generator: a failure names a value that fails again.
  let seed = 0x2545f491;
  const random = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  for (let i = 0; i < 200_000; i++) {
    const magnitude = 10 ** Math.floor(random() * 24 - 9);
    const sign = random() < 0.1 ? -1 : 1;
    // Timings are often whole microseconds: values on and near the six-decimal grid.
    const value =
      i % 3 === 0
        ? (sign * Math.round(random() * 1e9)) / 1e6
        : i % 3 === 1
          ? (sign * (Math.round(random() * 1e9) + 0.5)) / 1e6
          : sign * random() * magnitude;
    assert.equal(fixed6(value), value.toFixed(6), `value ${value}`);
  }
});
