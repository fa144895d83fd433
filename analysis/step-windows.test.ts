import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stepWindows } from './step-windows.ts';

const plan = { ratesPerSec: [20, 40], holdSeconds: 10, recoverySeconds: 10, drainSeconds: 5 };

test('with the plan, the windows are laid on the start the tags bound', () => {
  // Load started at 1000 s: r020 sent 1000.05–1009.98, r040 1010.01–1019.99, drain 1020–1024.9.
  const sends = [
    { key: 'r020', sendMinS: 1000.05, sendMaxS: 1009.98 },
    { key: 'r040', sendMinS: 1010.01, sendMaxS: 1019.99 },
    { key: 'drain', sendMinS: 1020.0, sendMaxS: 1024.9 },
    { key: 'recovery', sendMinS: 1025.01, sendMaxS: 1029.97 },
  ];
  const w = stepWindows(sends, 0.001, plan);
  assert.equal(w.basis, 'plan');
  // t0 within (1019.99 − 20, 1010.01 + 0.001 − 10] = (999.99, 1000.011]
  assert.ok(Math.abs(w.startS! - 1000) < 0.02, `start ${w.startS}`);
  const r040 = w.spans.get('r040')!;
  assert.ok(Math.abs(r040.startS - 1010) < 0.02 && Math.abs(r040.endS - 1020) < 0.02);
  const recovery = w.spans.get('recovery')!;
  assert.ok(Math.abs(recovery.startS - 1025) < 0.02 && Math.abs(recovery.endS - 1030) < 0.02);
});

test("a repeat (r020b) is laid on its own place in the plan, not on its rate's first run", () => {
  const repeated = { ratesPerSec: [20, 40, 20], holdSeconds: 10, recoverySeconds: 10, drainSeconds: 5 };
  const sends = [
    { key: 'r020', sendMinS: 1000.05, sendMaxS: 1009.98 },
    { key: 'r040', sendMinS: 1010.01, sendMaxS: 1019.99 },
    { key: 'r020b', sendMinS: 1020.02, sendMaxS: 1029.98 },
    { key: 'drain', sendMinS: 1030.0, sendMaxS: 1034.9 },
  ];
  const w = stepWindows(sends, 0.001, repeated);
  assert.equal(w.basis, 'plan', 'the repeat fits the plan');
  const again = w.spans.get('r020b')!;
  assert.ok(Math.abs(again.startS - 1020) < 0.02 && Math.abs(again.endS - 1030) < 0.02);
  assert.ok(Math.abs(w.spans.get('drain')!.startS - 1030) < 0.02);
});

test('whole-second stamps still place the start within a second', () => {
  // Send estimates are stamp − duration with stamps truncated to the second.
  const sends = [
    { key: 'r020', sendMinS: 999.95, sendMaxS: 1009.1 },
    { key: 'r040', sendMinS: 1009.05, sendMaxS: 1019.2 },
  ];
  const w = stepWindows(sends, 1, plan);
  assert.equal(w.basis, 'plan');
  assert.ok(Math.abs(w.startS! - 999.6) < 0.6, `start ${w.startS}`);
});

test('tags that do not fit the plan fall back to tag-to-tag windows, and say so', () => {
  // 15 s of r020 cannot fit a 10 s hold.
  const sends = [
    { key: 'r020', sendMinS: 1000, sendMaxS: 1014.99 },
    { key: 'r040', sendMinS: 1015, sendMaxS: 1024.99 },
  ];
  const w = stepWindows(sends, 0.001, plan);
  assert.equal(w.basis, 'tags');
  assert.match(w.notes.join(' '), /do not fit the run's plan/);
  const r020 = w.spans.get('r020')!;
  assert.equal(r020.startS, 1000);
  assert.ok(Math.abs(r020.endS - 1015) < 0.01);
  assert.ok(Math.abs(w.spans.get('r040')!.startS - r020.endS) < 1e-9, 'windows are contiguous');
});

test('without a plan each boundary lies between one step’s last send and the next one’s first', () => {
  const w = stepWindows(
    [
      { key: 'r040', sendMinS: 1010.0, sendMaxS: 1019.96 },
      { key: 'r020', sendMinS: 1000.0, sendMaxS: 1009.95 },
    ],
    0.001,
    undefined,
  );
  assert.deepEqual([...w.spans.keys()], ['r020', 'r040']);
  assert.ok(Math.abs(w.spans.get('r020')!.endS - 1009.9755) < 0.001);
});
