import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock, FakeProbe } from '../../test/helpers/fake-time.ts';
import { StepRecorder } from './step-recorder.ts';

const settings = { poolMax: 4, queueMax: 8, acquireTimeoutMs: 200, shed: true, extra: {} };

function recorder(options: { maxBuckets?: number } = {}) {
  const clock = new FakeClock();
  const probe = new FakeProbe();
  const steps = new StepRecorder({ service: 'test', settings, clock, probe, ...options });
  return { clock, probe, steps };
}

function bucket(steps: StepRecorder, key: string) {
  const found = steps.report().steps.find((s) => s.step === key);
  assert.ok(found, `bucket ${key} exists`);
  return found;
}

test('pool utilisation is the exact time-weighted mean over the time a step was current', () => {
  const { clock, steps } = recorder();
  steps.beginRequest('r020').finish(200);
  clock.advance(100);
  steps.poolState(2, 0); // 2 checked out for 200 ms
  clock.advance(200);
  steps.poolState(4, 3); // 4 checked out, 3 waiting for 400 ms
  clock.advance(400);
  steps.poolState(0, 0); // idle for the last 300 ms
  clock.advance(300);
  const pool = bucket(steps, 'r020').pool;
  assert.equal(pool.currentMs, 1000);
  // (2·200 + 4·400) / 1000 = 2.0 connections; 2.0 / 4 = 50 %
  assert.equal(pool.checkedOutMean, 2);
  assert.equal(pool.checkedOutPct, 50);
  assert.equal(pool.checkedOutMax, 4);
  // 3·400 / 1000 = 1.2 waiting
  assert.equal(pool.waitingMean, 1.2);
  assert.equal(pool.waitingMax, 3);
});

test('a new step takes over the pool figures; late requests of the old step do not take them back', () => {
  const { clock, steps } = recorder();
  steps.beginRequest('r020');
  steps.poolState(1, 0);
  clock.advance(1000);
  steps.beginRequest('r040'); // r040 is current from here
  steps.poolState(3, 0);
  clock.advance(500);
  steps.beginRequest('r020'); // a jittered late arrival of the previous step
  clock.advance(500);
  const r020 = bucket(steps, 'r020');
  const r040 = bucket(steps, 'r040');
  assert.equal(r020.requests, 2);
  assert.equal(r020.pool.currentMs, 1000);
  assert.equal(r020.pool.checkedOutMean, 1);
  assert.equal(r040.pool.currentMs, 1000);
  assert.equal(r040.pool.checkedOutMean, 3);
});

test('special buckets never steal the current step once a real step exists', () => {
  const { clock, steps } = recorder();
  steps.beginRequest(undefined); // untagged first: current while nothing else is
  steps.poolState(1, 0);
  clock.advance(100);
  steps.beginRequest('r020');
  clock.advance(100);
  steps.beginRequest('<bad>'); // invalid
  clock.advance(800);
  assert.equal(bucket(steps, 'untagged').pool.currentMs, 100);
  assert.equal(bucket(steps, 'r020').pool.currentMs, 900);
  assert.equal(bucket(steps, 'invalid').pool.currentMs, 0);
  assert.equal(bucket(steps, 'invalid').requests, 1);
});

test('distinct tags beyond the bucket limit land in overflow', () => {
  const { steps } = recorder({ maxBuckets: 3 });
  for (const tag of ['a', 'b', 'c', 'd', 'e']) steps.beginRequest(tag);
  const keys = steps.report().steps.map((s) => s.step);
  assert.deepEqual(keys, ['a', 'b', 'c', 'overflow']);
  assert.equal(bucket(steps, 'overflow').requests, 2);
});

test('statuses, sheds and served rate are counted per step', () => {
  const { clock, steps } = recorder();
  for (let i = 0; i < 10; i++) {
    const trace = steps.beginRequest('r010');
    if (i < 7) trace.finish(200);
    else {
      trace.shed(i === 9 ? 'timeout' : 'queue');
      trace.finish(503);
    }
    clock.advance(250);
  }
  const r010 = bucket(steps, 'r010');
  assert.equal(r010.requests, 10);
  assert.equal(r010.served, 7);
  assert.deepEqual(r010.statuses, { '200': 7, '503': 3 });
  assert.deepEqual(r010.sheds, { queue: 2, timeout: 1, admission: 0 });
  // 7 served over the 2.25 s between the first and the last arrival
  assert.equal(r010.servedPerSec, Math.round((7 / 2.25) * 100) / 100);
});

test('CPU and event-loop utilisation are attributed to the step that was current', () => {
  const { clock, probe, steps } = recorder();
  steps.beginRequest('r020');
  clock.advance(1000);
  probe.userUs += 200_000; // 200 ms of CPU in 1 s → 20 %
  probe.activeMs += 250;
  probe.idleMs += 750;
  steps.beginRequest('r040');
  clock.advance(1000);
  probe.userUs += 500_000;
  probe.systemUs += 100_000; // 600 ms in 1 s → 60 %
  probe.activeMs += 600;
  probe.idleMs += 400;
  assert.equal(bucket(steps, 'r020').process.cpuPct, 20);
  assert.equal(bucket(steps, 'r020').process.eventLoopUtilization, 0.25);
  assert.equal(bucket(steps, 'r040').process.cpuPct, 60);
  assert.equal(bucket(steps, 'r040').process.eventLoopUtilization, 0.6);
});

test('the timeline closes whole seconds with served, shed and pool means', () => {
  const { clock, steps } = recorder();
  clock.ms = 1_800_000_000_000; // on a second boundary
  steps.beginRequest('r020').finish(200);
  steps.poolState(2, 0);
  clock.advance(500);
  steps.poolState(4, 2);
  const shedTrace = steps.beginRequest('r020');
  shedTrace.shed('queue');
  shedTrace.finish(503);
  clock.advance(1000); // into the next second
  steps.poolState(0, 0);
  clock.advance(1600);
  steps.beginRequest('r020');
  const timeline = steps.report().timeline;
  assert.equal(timeline.length, 3);
  const [first, second, third] = timeline;
  assert.equal(first?.t, 1_800_000_000);
  assert.equal(first?.served, 1);
  assert.equal(first?.shed, 1);
  assert.equal(first?.checkedOutMean, 3); // 2 for 0.5 s, 4 for 0.5 s
  assert.equal(first?.waitingMean, 1);
  assert.equal(second?.checkedOutMean, 2); // 4 for 0.5 s, 0 for 0.5 s
  assert.equal(third?.checkedOutMean, 0);
  assert.equal(third?.step, 'r020');
});

test('the timeline is a bounded ring buffer', () => {
  const clock = new FakeClock();
  const steps = new StepRecorder({
    service: 't',
    settings,
    clock,
    probe: new FakeProbe(),
    timelineSeconds: 5,
  });
  steps.beginRequest('r001');
  for (let i = 0; i < 20; i++) {
    clock.advance(1000);
    steps.beginRequest('r001');
  }
  const timeline = steps.report().timeline;
  assert.equal(timeline.length, 5);
  // Strictly consecutive seconds, the newest kept.
  for (let i = 1; i < timeline.length; i++) assert.equal(timeline[i]!.t, timeline[i - 1]!.t + 1);
  // A long idle gap does not loop over every missed second, and still keeps the bound.
  clock.advance(10 * 24 * 3600 * 1000);
  steps.beginRequest('r001');
  assert.equal(steps.report().timeline.length, 5);
});

test('reset forgets buckets but keeps the live pool state', () => {
  const { clock, steps } = recorder();
  steps.beginRequest('r020');
  steps.poolState(3, 1);
  clock.advance(1000);
  steps.reset();
  assert.equal(steps.report().steps.length, 0);
  steps.beginRequest('r040');
  clock.advance(1000);
  const r040 = bucket(steps, 'r040');
  assert.equal(r040.pool.checkedOutMean, 3, 'connections still checked out are still counted');
  assert.equal(r040.pool.waitingMax, 1);
});

test('/steps/live gives the current step, the pool now and the newest closed second', () => {
  const { clock, steps } = recorder();
  assert.deepEqual(
    { step: steps.live().step, last: steps.live().last, checkedOut: steps.live().checkedOut },
    { step: null, last: null, checkedOut: 0 },
  );
  const start = clock.ms; // a whole second
  steps.beginRequest('r020').finish(200);
  steps.poolState(3, 2);
  clock.advance(1500);
  steps.beginRequest('r040');
  const live = steps.live();
  assert.equal(live.kind, 'plateau.server-live');
  assert.equal(live.step, 'r040');
  assert.equal(live.checkedOut, 3);
  assert.equal(live.waiting, 2);
  assert.equal(live.generatedMs, start + 1500);
  assert.equal(live.last?.t, start / 1000, 'the first second closed');
  assert.equal(live.last?.served, 1);
  assert.equal(live.last?.checkedOutMean, 3);
});

test('a summary is kept until a value arrives, then recomputed', () => {
  const { clock, steps } = recorder();
  const trace = steps.beginRequest('r020');
  steps.recordWait(trace, 10);
  assert.equal(bucket(steps, 'r020').waitMs.max, 10);
  const again = bucket(steps, 'r020').waitMs;
  again.max = -1; // a caller changing its copy must not change the next report
  assert.equal(bucket(steps, 'r020').waitMs.max, 10);
  steps.recordWait(trace, 2500);
  clock.advance(10);
  const wait = bucket(steps, 'r020').waitMs;
  assert.equal(wait.count, 2);
  assert.ok(Math.abs(wait.max - 2500) < 2.5, `max ${wait.max}`);
});

test("each closed second carries the p95 of its own responses' handler time, for /steps/live", () => {
  const { clock, steps } = recorder();
  clock.ms = 1_800_000_000_000; // on a second boundary
  // Second 1: nineteen 10 ms responses and one at once: p95 is the 19th value, 10 ms (to 4.4 %).
  for (let i = 0; i < 20; i++) {
    const trace = steps.beginRequest('r020');
    clock.advance(i === 19 ? 0 : 10);
    trace.finish(200);
  }
  clock.ms = 1_800_000_001_000;
  // Second 2: two responses of 500 ms each.
  const slow = [steps.beginRequest('r040'), steps.beginRequest('r040')];
  clock.advance(500);
  for (const trace of slow) trace.finish(200);
  clock.ms = 1_800_000_002_000;
  steps.beginRequest('r040'); // closes second 2
  const [first, second] = steps.report().timeline;
  assert.ok(first!.handlerP95Ms! >= 10 && first!.handlerP95Ms! <= 10.5, String(first!.handlerP95Ms));
  assert.ok(second!.handlerP95Ms! >= 500 && second!.handlerP95Ms! <= 522, String(second!.handlerP95Ms));
  assert.equal(steps.live().last?.handlerP95Ms, second!.handlerP95Ms);
  clock.advance(1000);
  steps.beginRequest('r040');
  assert.equal(steps.live().last?.handlerP95Ms, null, 'a second without responses has none');
});

test('the time the database was unreachable is integrated per step and per second, and refusals counted apart from sheds', () => {
  const clock = new FakeClock();
  clock.ms = 1_800_000_000_000; // on a second boundary
  const steps = new StepRecorder({
    service: 't',
    settings,
    clock,
    probe: new FakeProbe(),
    watchesDatabase: true,
  });
  steps.beginRequest('r020').finish(200);
  clock.advance(400);
  steps.databaseState(true); // unreachable from 0.4 s into r020 …
  assert.equal(steps.live().database, 'down');
  const refused = steps.beginRequest('r020');
  refused.unavailable('database');
  refused.shed('queue'); // a request refused once: the later shed is ignored
  refused.finish(503);
  clock.advance(1000);
  steps.beginRequest('r040').unavailable('database'); // … through the start of r040 …
  clock.advance(300);
  steps.databaseState(false); // … for 1.3 s in all: 1.0 s of r020, 0.3 s of r040
  clock.advance(1300);
  steps.beginRequest('r040');
  const report = steps.report();
  const r020 = report.steps.find((s) => s.step === 'r020')!;
  const r040 = report.steps.find((s) => s.step === 'r040')!;
  assert.equal(r020.databaseDownMs, 1000);
  assert.equal(r040.databaseDownMs, 300);
  assert.deepEqual(r020.unavailable, { database: 1 });
  assert.deepEqual(r020.sheds, { queue: 0, timeout: 0, admission: 0 }, 'not a shed');
  assert.deepEqual(r040.unavailable, { database: 1 });
  // Second 1: 0.6 s down (from 0.4 s); second 2: 0.7 s (to 1.7 s); second 3: up.
  assert.deepEqual(
    report.timeline.map((p) => [p.databaseDownMs, p.unavailable, p.shed]),
    [
      [600, 1, 0],
      [700, 1, 0],
      [0, 0, 0],
    ],
  );
  assert.equal(steps.live().database, 'up');
});

test('a service that does not watch its database reports nothing about it', () => {
  const { clock, steps } = recorder();
  steps.beginRequest('r020');
  clock.advance(1500);
  const report = steps.report();
  assert.equal(report.steps[0]!.databaseDownMs, undefined);
  assert.equal(report.steps[0]!.unavailable, undefined);
  assert.equal(report.timeline[0]!.databaseDownMs, undefined);
  assert.equal(steps.live().database, undefined);
});
