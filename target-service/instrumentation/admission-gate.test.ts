import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AdmissionGate,
  type AdmissionTransition,
  eventLoopDelaySignal,
  eventLoopUtilizationSignal,
} from './admission-gate.ts';

const SETTINGS = { high: 50, low: 20, sampleMs: 100, overdueMs: 50 };

function drive(signals: number[]) {
  const transitions: AdmissionTransition[] = [];
  const gate = new AdmissionGate(SETTINGS, (t) => transitions.push(t));
  const admitted = signals.map((s) => {
    gate.observe(s);
    return gate.admit();
  });
  return { gate, transitions, admitted };
}

test('the gate enters busy at the high watermark, not below it', () => {
  const { admitted, transitions } = drive([5, 30, 49.9, 50]);
  assert.deepEqual(admitted, [true, true, true, false]);
  assert.deepEqual(transitions, [{ to: 'busy', signal: 50, threshold: 50 }]);
});

test('it stays busy until the signal falls to the low watermark', () => {
  const { admitted, transitions } = drive([80, 45, 30, 20.1, 20, 10]);
  // busy at 80; 45, 30 and 20.1 are above the low watermark: still busy; 20 reopens the door
  assert.deepEqual(admitted, [false, false, false, false, true, true]);
  assert.deepEqual(
    transitions.map((t) => t.to),
    ['busy', 'normal'],
  );
  assert.equal(transitions[1]!.threshold, 20);
});

test('a signal oscillating between the watermarks does not make it flap', () => {
  // Normal, then between the marks for a long time: never busy.
  const between = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? 25 : 45));
  assert.deepEqual(drive(between).transitions, []);
  // Busy, then between the marks: stays busy, exactly one transition.
  const { transitions, admitted } = drive([60, ...between]);
  assert.equal(transitions.length, 1);
  assert.ok(admitted.every((a) => a === false));
});

test('each crossing in turn is one transition, counted by the state entered', () => {
  const { gate } = drive([60, 10, 60, 10, 60]);
  assert.deepEqual(gate.transitions, { busy: 3, normal: 2 });
  assert.equal(gate.state, 'busy');
  assert.equal(gate.lastSignal, 60);
});

test('the door turns busy when the reading is overdue by the high watermark: a long loop turn', () => {
  const gate = new AdmissionGate(SETTINGS); // sample every 100 ms, busy at 50 ms
  gate.noteReading(1000);
  assert.equal(gate.admit(1100), true, 'a reading due now: not overdue');
  assert.equal(gate.admit(1149), true, 'overdue by 49 ms');
  assert.equal(gate.admit(1150), false, 'overdue by 50 ms: the loop is late now');
  assert.deepEqual(gate.transitions, { busy: 1, normal: 0 });
  // Only a reading at or under the low watermark reopens it.
  gate.observe(30);
  assert.equal(gate.admit(1151), false);
  gate.observe(20);
  gate.noteReading(1200);
  assert.equal(gate.admit(1210), true);
  // Without readings (the timer not started) the door judges by the state alone.
  const idle = new AdmissionGate(SETTINGS);
  assert.equal(idle.admit(1_000_000), true);
  // A signal that is not a delay has no overdue check.
  const utilization = new AdmissionGate({ high: 95, low: 80, sampleMs: 100 });
  utilization.noteReading(0);
  assert.equal(utilization.admit(10_000), true);
});

test('watermarks that cannot give hysteresis are refused', () => {
  assert.throws(() => new AdmissionGate({ high: 20, low: 20, sampleMs: 100 }), /must be below/);
});

test('start reads the signal on its timer and stop ends it', async () => {
  const readings = [70, 70, 5];
  const gate = new AdmissionGate({ high: 50, low: 20, sampleMs: 5 });
  let reads = 0;
  // Waits on the fourth reading, not on a clock: the gate has judged the third by then.
  const fourthRead = new Promise<void>((resolve) => {
    gate.start(() => {
      reads++;
      if (reads === 4) resolve();
      return readings.shift() ?? 5;
    });
  });
  // The gate's timer is unref'd (it never holds a service open): hold the loop while waiting.
  const holdLoop = setInterval(() => {}, 1000);
  await fourthRead;
  clearInterval(holdLoop);
  gate.stop();
  assert.deepEqual(gate.transitions, { busy: 1, normal: 1 });
  const readsAtStop = reads;
  // Stopped: several sample periods later, nothing more was read.
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(reads, readsAtStop);
});

test("the utilisation signal reads a busy loop's share of the time", async () => {
  const signal = eventLoopUtilizationSignal();
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(signal.read() < 50, 'an idle loop');
  const end = performance.now() + 150;
  while (performance.now() < end) {
    // keep the loop busy
  }
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(signal.read() > 80, 'a loop that ran callbacks the whole time');
});

test("the event-loop signal reads a blocked loop's delay", async () => {
  const signal = eventLoopDelaySignal(1000);
  try {
    await new Promise((resolve) => setTimeout(resolve, 50));
    signal.read();
    for (let i = 0; i < 5; i++) {
      const end = performance.now() + 60;
      while (performance.now() < end) {
        // block the loop: the histogram's timer is late by ~60 ms each turn
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.ok(signal.read() > 20, 'a loop blocked 60 ms at a time reads as late');
    // Blocked for a whole interval: no histogram sample at all, and still read as late.
    const end = performance.now() + 1100;
    while (performance.now() < end) {
      // block past the reading's own interval
    }
    assert.ok(signal.read() >= 100, 'a reading that is itself late reads as late');
  } finally {
    signal.close();
  }
});
