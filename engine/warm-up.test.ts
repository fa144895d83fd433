// The engine's warm-up rehearsal against a local sink. Its rounds must keep up with 1,000/s on an
// idle core, so this file runs with nothing beside it.
// test-run: solo
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { request } from 'undici';
import type { ConstantArrivalRateScenario, ScenarioConfig } from './executor/registry.ts';
import type { RuntimeSettings } from './js/runtime.ts';
import { DEFAULT_SYSTEM_TAGS } from './metrics/system-tags.ts';
import { CsvOutput } from './output/csv.ts';
import { ExecutionTuple, parseSegment, parseSequence } from './schedule/execution-segment.ts';
import {
  coldStartWarnings,
  earlyRate,
  peakArrivalRate,
  peakScenario,
  REHEARSAL,
  rehearseHotPath,
  roundConfig,
  SINK_RESPONSES,
  startSink,
  stopSink,
} from './warm-up.ts';

const base = { startTimeNs: 0, gracefulStopNs: 30e9, exec: 'default', env: {}, tags: {} };
const car: ConstantArrivalRateScenario = {
  ...base,
  name: 'car',
  executor: 'constant-arrival-rate',
  tags: { step: 'constant' },
  rate: 100,
  timeUnitNs: 1e9,
  durationNs: 30e9,
  preAllocatedVUs: 10,
  maxVUs: 100,
};
const settings: RuntimeSettings = {
  tags: { run: 'test' },
  discardResponseBodies: false,
  maxRedirects: 10,
  noCookiesReset: false,
  noConnectionReuse: false,
  noVUConnectionReuse: false,
  insecureSkipTLSVerify: false,
  throw: false,
  httpDebug: '',
  userAgent: '',
  hosts: {},
  tls: { auth: [] },
  minIterationDurationMs: 0,
  rps: 0,
  blockHostnames: [],
  blacklistIPs: [],
  systemTags: [...DEFAULT_SYSTEM_TAGS],
};

test('peakArrivalRate: the highest planned rate per second over arrival-rate scenarios only', () => {
  const scenarios: ScenarioConfig[] = [
    { ...base, name: 'vus', executor: 'constant-vus', vus: 5000, durationNs: 1e9 },
    {
      ...base,
      name: 'car',
      executor: 'constant-arrival-rate',
      rate: 30,
      timeUnitNs: 10e6, // 30 per 10 ms = 3,000/s
      durationNs: 1e9,
      preAllocatedVUs: 1,
      maxVUs: 1,
    },
    {
      ...base,
      name: 'rar',
      executor: 'ramping-arrival-rate',
      startRate: 10,
      timeUnitNs: 1e9,
      stages: [
        { durationNs: 1e9, target: 2500 },
        { durationNs: 1e9, target: 0 },
      ],
      preAllocatedVUs: 1,
      maxVUs: 1,
    },
  ];
  assert.equal(peakArrivalRate(scenarios), 3000);
  assert.equal(peakArrivalRate(scenarios.slice(2)), 2500);
  assert.equal(peakArrivalRate(scenarios.slice(0, 1)), 0, 'VU-based executors plan no rate');
});

test('peakScenario: the arrival-rate scenario with the highest rate', () => {
  const slow = { ...car, name: 'slow', rate: 10, timeUnitNs: 1e9 };
  const fast = { ...car, name: 'fast', rate: 2, timeUnitNs: 1e6 }; // 2,000/s
  assert.equal(peakScenario([slow, fast])?.name, 'fast');
  assert.equal(
    peakScenario([{ ...base, name: 'v', executor: 'constant-vus', vus: 1, durationNs: 1e9 }]),
    undefined,
  );
});

test('roundConfig: the test scenario, same keys in the same order, at the rehearsal rate', () => {
  const round = roundConfig(car, 5000, REHEARSAL);
  assert.deepEqual(Object.keys(round), Object.keys(car), 'the same object shape as the scenario');
  assert.equal(round.executor, 'constant-arrival-rate');
  assert.equal(round.executor === 'constant-arrival-rate' && round.rate, 5000);
  assert.equal(round.executor === 'constant-arrival-rate' && round.durationNs, REHEARSAL.roundMs * 1e6);
  assert.equal(round.preAllocatedVUs, REHEARSAL.vus);
  assert.deepEqual(round.tags, car.tags, 'the scenario tags travel with it');

  const ramp: ScenarioConfig = {
    ...base,
    name: 'steps',
    executor: 'ramping-arrival-rate',
    startRate: 0,
    timeUnitNs: 1e9,
    stages: [{ durationNs: 60e9, target: 400 }],
    preAllocatedVUs: 5,
    maxVUs: 50,
  };
  const rampRound = roundConfig(ramp, 2000, REHEARSAL);
  assert.deepEqual(Object.keys(rampRound), Object.keys(ramp));
  assert.ok(rampRound.executor === 'ramping-arrival-rate');
  assert.equal(rampRound.startRate, 2000, 'a ramp rehearses at a constant rate');
  assert.deepEqual(rampRound.stages, [{ durationNs: REHEARSAL.roundMs * 1e6, target: 2000 }]);
  assert.deepEqual(Object.keys(rampRound.stages[0]!), Object.keys(ramp.stages[0]!));
});

test('the rehearsal sink answers every request head, pipelined or split across packets', async () => {
  const sink = await startSink();
  const { port } = sink.server.address() as AddressInfo;
  const socket = connect(port, '127.0.0.1');
  try {
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    const answers = () => received.split('HTTP/1.1 200 OK').length - 1;
    // Two requests in one packet, then one whose blank line is split over three.
    socket.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => answers() === 2);
    socket.write('GET /c HTTP/1.1\r\nHost: x\r');
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.write('\n\r');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(answers(), 2, 'no answer before the head is complete');
    socket.write('\n');
    await waitFor(() => answers() === 3);
    assert.match(received, /Content-Length: 2\r\n[\s\S]*\r\n\r\nok$/);
  } finally {
    socket.destroy();
    await stopSink(sink);
  }
});

test('rehearseHotPath: runs rounds until it keeps up, writes only into its own directory', async () => {
  const before = new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('plateau-warm-up-')));
  let made: string[] = [];
  // Six rounds: every sink response and every iteration shape at least once.
  const limits = { ...REHEARSAL, roundMs: 150, maxRounds: 7, minRounds: 6, compactAfterRounds: 2, vus: 20 };
  const rehearsal = await rehearseHotPath(
    1000,
    {
      // A hosts mapping for 127.0.0.1 must not take the rehearsal away from its sink.
      settings: { ...settings, userAgent: 'rehearsal-test', hosts: { '127.0.0.1': '127.0.0.2' } },
      thresholds: { http_req_duration: ['p(95)<1000'] },
      scenario: car,
      outputs: (dir) => {
        made = [join(dir, '0.csv')];
        return [new CsvOutput({ fileName: made[0]!, saveIntervalMs: 1000, timeFormat: 'unix' })];
      },
    },
    limits,
  );
  assert.ok(
    rehearsal.rounds >= limits.minRounds && rehearsal.rounds <= limits.maxRounds,
    `rounds ${rehearsal.rounds}`,
  );
  // 1,000/s for 150 ms is 150 starts a round, on an idle core nearly all of them.
  assert.ok(rehearsal.iterations >= 75 * rehearsal.rounds, `iterations ${rehearsal.iterations}`);
  assert.equal(rehearsal.warm, true);
  assert.equal(rehearsal.achieved.length, rehearsal.rounds);
  assert.ok(rehearsal.achieved.at(-1)! >= limits.warmShare, `achieved ${rehearsal.achieved}`);
  // Every iteration shape sends its request (one failing before it would leave this short).
  assert.ok(
    rehearsal.answered >= rehearsal.iterations,
    `every rehearsal request reached the sink: ${rehearsal.answered}`,
  );
  // Each round is a test start of its own: its VUs open connections to its own sink.
  assert.equal(rehearsal.connections.length, rehearsal.rounds);
  for (const accepted of rehearsal.connections)
    assert.ok(accepted >= 1, `connections ${rehearsal.connections}`);
  assert.equal(made.length, 1, 'outputs were made in the rehearsal directory');
  assert.equal(existsSync(dirname(made[0]!)), false, 'and removed with it');
  const after = readdirSync(tmpdir()).filter(
    (name) => name.startsWith('plateau-warm-up-') && !before.has(name),
  );
  assert.deepEqual(after, []);
});

test('the sink answers in six header shapes, each a valid response the engine reads', async () => {
  const names = new Set<string>();
  for (const response of SINK_RESPONSES) {
    const sink = await startSink(response);
    try {
      const { port } = sink.server.address() as AddressInfo;
      const answer = await request(`http://127.0.0.1:${port}/warm-up`);
      assert.equal(answer.statusCode, 200);
      assert.equal(await answer.body.text(), 'ok');
      names.add(
        Object.keys(answer.headers)
          .filter((name) => name !== 'connection' && name !== 'keep-alive')
          .sort()
          .join(','),
      );
      assert.equal(sink.accepted(), 1);
    } finally {
      await stopSink(sink);
    }
  }
  // Beyond four shapes V8 stops specializing on any one (see SINK_RESPONSES).
  assert.ok(names.size >= 5, `distinct header sets: ${[...names].join(' | ')}`);
});

async function waitFor(condition: () => boolean, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('earlyRate and coldStartWarnings: a scenario at full rate from its start, above 5,000/s per process', () => {
  const fast: ConstantArrivalRateScenario = { ...car, name: 'fast', rate: 10_000, maxVUs: 800 };
  assert.equal(earlyRate(fast, ExecutionTuple.create()), 10_000);
  const half = ExecutionTuple.create(parseSegment('0:1/2'), parseSequence('0,1/2,1'));
  assert.equal(earlyRate(fast, half), 5000, 'a segment carries its share');
  const ramp = (rampNs: number): ScenarioConfig => ({
    ...base,
    name: 'ramp',
    executor: 'ramping-arrival-rate',
    startRate: 0,
    timeUnitNs: 1e9,
    stages: [
      { durationNs: rampNs, target: 10_000 },
      { durationNs: 10e9, target: 10_000 },
    ],
    preAllocatedVUs: 200,
    maxVUs: 800,
  });
  assert.equal(earlyRate(ramp(1e9), ExecutionTuple.create()), 1000, 'a 1 s ramp is at a tenth after 100 ms');
  assert.equal(earlyRate(ramp(0), ExecutionTuple.create()), 10_000, "k6's instant jump is a cold start");
  assert.equal(
    earlyRate(
      { ...base, name: 'v', executor: 'constant-vus', vus: 1, durationNs: 1e9 },
      ExecutionTuple.create(),
    ),
    0,
  );

  const warnings = coldStartWarnings(
    [fast, ramp(1e9), { ...fast, name: 'slow', rate: 5000 }],
    ExecutionTuple.create(),
  );
  assert.equal(warnings.length, 1, '5,000/s is within what starts cleanly');
  assert.match(warnings[0]!, /scenario "fast" is at 10,000 iterations\/s/);
  assert.match(warnings[0]!, /ramp of about a second/);
  assert.match(warnings[0]!, /--execution-segment/);
  assert.deepEqual(coldStartWarnings([fast], half), [], 'half of 10,000/s per process is fine');
});
