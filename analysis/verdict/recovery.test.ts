import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SaturationRow, TimelinePoint } from '../../contract/index.ts';
import type { VerdictInputs } from './inputs.ts';
import { afterRamp, recoveryFrom } from './recovery.ts';
import { rateRow, timelineSeconds, verdictInputs } from './test-rows.ts';

/** Three seconds of the last rate step from t=100, then the phase after the ramp from t=103 (drain). */
function afterRampOf(waitingMeans: number[], extra: Partial<TimelinePoint> = {}): TimelinePoint[] {
  return [
    ...timelineSeconds('r080', 100, [20, 30, 40]),
    ...timelineSeconds('drain', 103, waitingMeans, extra),
  ];
}

function recoveryOf(
  timeline: TimelinePoint[],
  overrides: Partial<VerdictInputs> = {},
  rows: SaturationRow[] = [],
) {
  const notes: string[] = [];
  const recovery = recoveryFrom(verdictInputs(rows, { timeline, ...overrides }), rows, 250, notes);
  return { ...recovery, notes };
}

test('the phase after the ramp starts at the first second labelled drain or recovery', () => {
  const timeline = [
    ...timelineSeconds('r080', 100, [1, 2]),
    ...timelineSeconds('recovery', 102, [3]),
    ...timelineSeconds('drain', 103, [4]),
  ];
  assert.deepEqual(
    afterRamp(timeline).map((p) => p.t),
    [102, 103],
  );
  assert.deepEqual(afterRamp(timelineSeconds('r080', 100, [1, 2])), []);
});

test("recovery is judged against the queue level the recovery rate settles to, learnt from the run's last seconds", () => {
  const cases: { says: string; waiting: number[]; seconds: number | null; summary: string }[] = [
    // The last 4 of 10 s hover at 0.3–0.5: that is the recovery rate's own level, first reached 3 s in.
    {
      says: 'settled',
      waiting: [30, 10, 2, 0.5, 0.3, 0.4, 0.3, 0.5, 0.4, 0.3],
      seconds: 3,
      summary: "back to the recovery rate's own level (waiting ≤ 0.5) within 3 s of the end of the ramp",
    },
    // The last 8 of 20 s still drain (6, 4, 2, 1 then 0.2): halved to the last 4, they are flat at 0.2.
    {
      says: 'settled once halved',
      waiting: [50, 45, 40, 35, 30, 25, 20, 16, 12, 10, 8, 7, 6, 4, 2, 1, 0.2, 0.2, 0.2, 0.2],
      seconds: 16,
      summary: "back to the recovery rate's own level (waiting ≤ 0.2) within 16 s of the end of the ramp",
    },
    // A level at 0 is judged against an empty queue (never under 0.1).
    {
      says: 'settled at zero',
      waiting: [8, 4, 0, 0, 0, 0, 0],
      seconds: 2,
      summary: "back to the recovery rate's own level (waiting ≤ 0.1) within 2 s of the end of the ramp",
    },
    // Rising from 9 to 13 over the last 4 s: the recovery rate itself is too much.
    {
      says: 'growing',
      waiting: [1, 2, 3, 4, 5, 6, 8, 10, 12, 14],
      seconds: null,
      summary:
        'not recovered: the wait queue still grew at the recovery rate (waiting mean 9 → 13 over the last 4 s)',
    },
    // Still falling when halved down to 3 s: the run ended before the backlog drained.
    {
      says: 'draining',
      waiting: [40, 36, 32, 28, 24, 20, 16, 12, 8, 4],
      seconds: null,
      summary:
        'not recovered within the run: the wait queue was still draining when it ended (waiting mean 12 → 6 over the last 3 s)',
    },
  ];
  for (const c of cases) {
    const recovery = recoveryOf(afterRampOf(c.waiting));
    assert.equal(recovery.seconds, c.seconds, c.says);
    assert.equal(recovery.summary, c.summary, c.says);
    assert.deepEqual(recovery.notes, [], c.says);
  }
});

test('a phase after the ramp too short to learn a level from is judged against an empty queue, with a note', () => {
  const cases: { says: string; waiting: number[]; seconds: number | null; summary: string }[] = [
    // 4 s, empty at the third: 2 s.
    {
      says: 'emptied',
      waiting: [5, 1, 0, 0],
      seconds: 2,
      summary: 'queue empty within 2 s of the end of the ramp',
    },
    // 4 s, never under 0.1.
    {
      says: 'never emptied',
      waiting: [5, 4, 3, 3],
      seconds: null,
      summary: 'the wait queue never emptied within the run',
    },
  ];
  for (const c of cases) {
    const recovery = recoveryOf(afterRampOf(c.waiting));
    assert.equal(recovery.seconds, c.seconds, c.says);
    assert.equal(recovery.summary, c.summary, c.says);
    assert.match(recovery.notes.join('\n'), /too short \(4 s\).*judged against an empty queue/, c.says);
  }
});

test("with the client's p95 per second, recovery also waits for it to meet the objective, on the server's clock", () => {
  const timeline = afterRampOf([5, 1, 0, 0]);
  // The client's clock is 2 s behind the server's: server second 105 is client second 103.
  const clientP95MsBySecond = new Map([
    [103, 400], // the queue emptied at 105, but callers still waited 400 ms
    [104, 120], // back under 250 ms at server second 106
  ]);
  const recovery = recoveryOf(timeline, { clientP95MsBySecond, clockOffsetS: 2 });
  assert.equal(recovery.seconds, 3);
  assert.equal(recovery.summary, 'queue empty and p95 under 250 ms within 3 s of the end of the ramp');

  // p95 never under the objective.
  const never = recoveryOf(timeline, {
    clientP95MsBySecond: new Map([
      [103, 400],
      [104, 400],
      [105, 400],
    ]),
    clockOffsetS: 2,
  });
  assert.equal(never.summary, 'the wait queue or client p95 never recovered within the run');
});

test('without a server timeline, recovery is the recovery step as the client saw it, or not measured', () => {
  const recoveryRow = {
    ...rateRow(20, 20),
    step: 'recovery',
    offeredPerSec: null,
    latencyMs: { med: 40, p95: 80, p99: 90, max: 95 },
  };
  assert.deepEqual(recoveryOf([], {}, [rateRow(20, 20), recoveryRow]), {
    seconds: null,
    summary: 'no server timeline; client p95 in recovery 80 ms',
    notes: [],
  });
  assert.deepEqual(recoveryOf([], {}, [rateRow(20, 20)]), {
    seconds: null,
    summary: 'not measured (no server timeline and no recovery step)',
    notes: [],
  });
});

test('seconds without the database after the ramp are not judged, and gaps in the timeline are noted', () => {
  const outage = recoveryOf(afterRampOf([5, 1, 0, 0, 0, 0], { databaseDownMs: 700 }));
  assert.equal(outage.seconds, null);
  assert.equal(outage.summary, 'not judged: the database was unreachable for 4.2 s after the ramp');

  // t=103, 104, then 107: the service stalled for two seconds.
  const gappy = [
    ...timelineSeconds('r080', 100, [20, 30, 40]),
    ...timelineSeconds('drain', 103, [5, 1]),
    ...timelineSeconds('drain', 107, [0, 0]),
  ];
  const recovery = recoveryOf(gappy);
  assert.equal(recovery.seconds, 4);
  assert.match(recovery.notes.join('\n'), /gaps after the ramp.*recovery is approximate/);
});
