import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProbeStep, TimelinePoint } from '../../contract/index.ts';
import {
  nextProbeMove,
  type ProbeCriteria,
  type ProbeStepData,
  probeKnee,
  probeSigns,
  summarizeProbeStep,
} from './probe-judge.ts';

const criteria: ProbeCriteria = { p95Ms: 250, failRate: 0.01, followingShare: 0.9, poolSaturatedPct: 90 };

/** A service second labelled `step` serving `served`/s, with a quiet pool of 4 unless told. */
const second = (
  step: string,
  t: number,
  served: number,
  extra: Partial<TimelinePoint> = {},
): TimelinePoint => ({
  t,
  step,
  served,
  shed: 0,
  checkedOutMean: 1,
  waitingMean: 0,
  waitingMax: 0,
  cpuPct: 10,
  handlerP95Ms: 55,
  ...extra,
});

/** A probe step of 3 s at `offered`/s: the service's three seconds and the generator's. */
function data(
  offered: number,
  served: number,
  extra: Partial<ProbeStepData> = {},
  server: Partial<TimelinePoint> = {},
): ProbeStepData {
  const step = `p${String(offered).padStart(3, '0')}`;
  return {
    step,
    offeredPerSec: offered,
    rampSeconds: 1,
    // The first seconds may hold the 1 s ramp from the step before: they are left out.
    serverSeconds: [
      second(step, 100, offered / 2, server),
      second(step, 101, served, server),
      second(step, 102, served, server),
    ],
    loadSeconds: [
      { completedPerSec: offered / 2, droppedPerSec: 0 },
      { completedPerSec: served, droppedPerSec: 0 },
      { completedPerSec: served, droppedPerSec: 0 },
    ],
    generatorCpuPct: [20, 25, 30],
    client: { p95Ms: 60, failureRate: 0 },
    saturatedDelta: 0,
    poolMax: 4,
    ...extra,
  };
}

const judged = (d: ProbeStepData): ProbeStep => {
  const summary = summarizeProbeStep(d);
  return { ...summary, signs: probeSigns(summary, criteria) };
};
const kinds = (d: ProbeStepData) => judged(d).signs.map((s) => s.kind);

test("a probe step's figures: its settled seconds, the service's served and the client's p95", () => {
  const step = summarizeProbeStep(
    data(64, 38.5, {
      loadSeconds: [
        { completedPerSec: 30, droppedPerSec: 0 },
        { completedPerSec: 50, droppedPerSec: 0 },
        { completedPerSec: 60, droppedPerSec: 2 },
        { completedPerSec: 62, droppedPerSec: 0 },
      ],
    }),
  );
  assert.equal(step.servedPerSec, 38.5, 'the service counted its 2xx');
  assert.equal(step.servedSource, 'server');
  assert.equal(step.sentPerSec, 63, 'offered 64/s less 1 dropped a second');
  assert.equal(step.p95Ms, 60);
  assert.equal(step.p95Source, 'client');
  assert.equal(step.seconds, 1);
  assert.equal(step.generatorCpuPct, 30);
  // Without /steps/live: served is the client's completions less its failure share, p95 the client's.
  const client = summarizeProbeStep(
    data(64, 40, { serverSeconds: [], client: { p95Ms: 300, failureRate: 0.25 } }),
  );
  assert.equal(client.servedPerSec, 30);
  assert.equal(client.servedSource, 'client');
  // Without the generator's per-step trend: the service's busiest second.
  const server = summarizeProbeStep(data(32, 32, { client: null }, { handlerP95Ms: 120 }));
  assert.equal(server.p95Ms, 120);
  assert.equal(server.p95Source, 'server');
});

test('the signs of the knee, each from its own figure', () => {
  const cases: { says: string; step: ProbeStepData; signs: string[] }[] = [
    // Nothing near a limit.
    { says: 'quiet', step: data(16, 16), signs: [] },
    // 38.5 of 64/s served: the plateau rule's 90 % is not met.
    { says: 'served fell', step: data(64, 38.5), signs: ['served'] },
    // p95 at the objective.
    { says: 'p95', step: data(32, 32, { client: { p95Ms: 250, failureRate: 0 } }), signs: ['p95'] },
    // 2 % failed, over the 1 % budget.
    {
      says: 'failures',
      step: data(32, 32, { client: { p95Ms: 60, failureRate: 0.02 } }),
      signs: ['failures'],
    },
    // Sheds counted by the service when the generator has no failure rate: 4 of 32/s.
    {
      says: 'sheds',
      step: data(32, 32, { client: null }, { shed: 4, handlerP95Ms: 60 }),
      signs: ['failures'],
    },
    // The pool at 95 % with 2 waiting.
    {
      says: 'pool full',
      step: data(32, 32, {}, { checkedOutMean: 3.8, waitingMean: 2 }),
      signs: ['saturated'],
    },
    // The pool at 95 % but nobody waiting: busy, not full.
    { says: 'pool busy', step: data(32, 32, {}, { checkedOutMean: 3.8, waitingMean: 0.3 }), signs: [] },
    // The service's own count of requests that found every limit full: 12 in a 2 s step at 32/s.
    { says: 'saturated count', step: data(32, 32, { saturatedDelta: 12 }), signs: ['saturated'] },
    // 4 of 64 starts dropped a second with the generator at 30 %: every VU waited on the service.
    {
      says: 'dropped',
      step: data(64, 60, {
        loadSeconds: [
          { completedPerSec: 30, droppedPerSec: 0 },
          { completedPerSec: 60, droppedPerSec: 4 },
          { completedPerSec: 60, droppedPerSec: 4 },
        ],
      }),
      signs: ['dropped'],
    },
    // A generator at its own limit: its p95 and drops are its own, not the service's sign.
    {
      says: 'busy generator',
      step: data(4096, 4000, { generatorCpuPct: [97], client: { p95Ms: 400, failureRate: 0 } }),
      signs: [],
    },
  ];
  for (const c of cases) assert.deepEqual(kinds(c.step), c.signs, c.says);
});

test('the probe stops at the knee, one step past another first sign, at the generator, or for a failing service', () => {
  const quiet = [judged(data(2, 2)), judged(data(4, 4)), judged(data(8, 8))];
  const cases: {
    says: string;
    steps: ProbeStep[];
    planned?: number;
    cut?: boolean;
    stop: string | null;
    words?: RegExp;
  }[] = [
    { says: 'nothing yet', steps: quiet, stop: null },
    // Served fell at 16/s: one more step, to see what the service holds past the knee.
    { says: 'served fell', steps: [...quiet, judged(data(16, 9))], stop: null },
    {
      says: 'a step past served falling',
      steps: [...quiet, judged(data(16, 9)), judged(data(32, 9.5))],
      stop: 'knee',
      words:
        /stopped at p032, a step past where served first fell below sent \(p016: served 9\/s of 16\/s sent\); served 9.5\/s of 32\/s sent there/,
    },
    // The pool filled at 16/s, served fell at 32/s: one more step past the fall.
    {
      says: 'another sign, then served fell',
      steps: [
        ...quiet,
        judged(data(16, 16, {}, { checkedOutMean: 3.9, waitingMean: 3 })),
        judged(data(32, 20)),
      ],
      stop: null,
    },
    {
      says: 'a step past that fall',
      steps: [
        ...quiet,
        judged(data(16, 16, {}, { checkedOutMean: 3.9, waitingMean: 3 })),
        judged(data(32, 20)),
        judged(data(64, 20.5)),
      ],
      stop: 'knee',
      words: /\(p032: served 20\/s of 32\/s sent; the first sign at p016: pool 98% checked out, 3 waiting\)/,
    },
    // The pool filled at 16/s but served followed: one more step, to see whether served falls.
    {
      says: 'first sign',
      steps: [...quiet, judged(data(16, 16, {}, { checkedOutMean: 3.9, waitingMean: 3 }))],
      stop: null,
    },
    {
      says: 'one step past the first sign',
      steps: [
        ...quiet,
        judged(data(16, 16, {}, { checkedOutMean: 3.9, waitingMean: 3 })),
        judged(data(32, 31)),
      ],
      stop: 'knee',
      words:
        /a step past the first sign at p016 \(pool 98% checked out, 3 waiting\); served still followed there/,
    },
    // Half of the first sign's requests failed: no need to press harder.
    {
      says: 'failing past the knee',
      steps: [...quiet, judged(data(16, 8, { client: { p95Ms: 60, failureRate: 0.5 } }))],
      stop: 'knee',
    },
    {
      says: 'generator',
      steps: [...quiet, judged(data(4096, 4000, { generatorCpuPct: [96] }))],
      stop: 'generator',
      words: /reached its own limit at p4096 \(CPU 96% of the cores it can use\)/,
    },
    {
      says: 'failing from the first request',
      steps: [judged(data(2, 0, { client: { p95Ms: 3, failureRate: 1 } }))],
      stop: 'failing',
      words: /the service failed from the first request: 100% of p002's requests at 2\/s failed/,
    },
    {
      says: 'budget ran out',
      steps: quiet,
      planned: 3,
      cut: true,
      stop: 'budget',
      words: /no sign of a knee up to 8\/s within the probe's share of the budget/,
    },
    { says: 'top rate', steps: quiet, planned: 3, cut: false, stop: 'end' },
  ];
  for (const c of cases) {
    const move = nextProbeMove(c.steps, c.planned ?? 12, c.cut ?? false);
    assert.equal(move.stop ? move.reason : null, c.stop, c.says);
    if (c.words && move.stop) assert.match(move.words, c.words, c.says);
  }
});

test('where the probe saw the knee: the plateau it served past it, else the first sign', () => {
  const fell = [judged(data(16, 16)), judged(data(32, 32)), judged(data(64, 38.5)), judged(data(128, 39))];
  assert.deepEqual(probeKnee(fell), {
    firstSign: { step: 'p064', offeredPerSec: 64 },
    plateauPerSec: 39,
    kneePerSec: 39,
  });
  const latency = [
    judged(data(16, 16)),
    judged(data(32, 32, { client: { p95Ms: 300, failureRate: 0 } })),
    judged(data(64, 63)),
  ];
  assert.deepEqual(probeKnee(latency), {
    firstSign: { step: 'p032', offeredPerSec: 32 },
    plateauPerSec: null,
    kneePerSec: 32,
  });
  assert.deepEqual(probeKnee([judged(data(2, 2))]), {
    firstSign: null,
    plateauPerSec: null,
    kneePerSec: null,
  });
});

test('at a few requests a second, one request short is not served falling below sent', () => {
  // 2/s for 2 settled seconds: 3 served of 4 sent is 75 %, but one request short of a second's luck.
  assert.deepEqual(kinds(data(2, 1.5)), []);
  // 16/s: 12 of 16 is 8 requests short over the step.
  assert.deepEqual(kinds(data(16, 12)), ['served']);
});

test('a step that began late in its first second: its ramp, filling the next, is left out', () => {
  // 16/s after 8/s, begun ~1 s before the end of its first second: the 1 s ramp from 8/s to
  // 16/s fills the next second, which serves ~12; the service kept up.
  const d = data(16, 16, {}, {});
  d.serverSeconds = [8.1, 12, 16].map((served, i) => ({ ...d.serverSeconds[i]!, served }));
  assert.equal(judged(d).servedPerSec, 16);
  assert.deepEqual(kinds(d), []);
});

test("the shortfall is counted over the service's seconds, however many readings the generator made", () => {
  // 8/s, 7 served in each of the service's two settled seconds (a 4-second step): two
  // requests short, one second's luck at this rate. The generator's polls fell five times.
  const d = data(8, 7, {
    loadSeconds: [4, 6, 8, 8, 8].map((completedPerSec) => ({ completedPerSec, droppedPerSec: 0 })),
  });
  d.serverSeconds = [4, 6, 7, 7].map((served, i) => ({ ...d.serverSeconds[0]!, t: 100 + i, served }));
  assert.equal(judged(d).seconds, 2);
  assert.deepEqual(kinds(d), []);
});
