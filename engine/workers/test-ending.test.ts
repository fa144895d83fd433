import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideEnding, type WorkerEnding } from './test-ending.ts';

function worker(
  index: number,
  result: [number, string] | undefined,
  summary = false,
  signal?: NodeJS.Signals,
): WorkerEnding {
  return {
    index,
    segment: ['0:1/2', '1/2:1'][index]!,
    pid: 100 + index,
    result: result && { exitCode: result[0], reason: result[1] },
    exit: { code: signal ? null : (result?.[0] ?? 1), signal: signal ?? null },
    summary,
  };
}

test('one code for the test from its workers’ endings', () => {
  const cases: [string, WorkerEnding[], number, RegExp | string][] = [
    // The worker that ended the test speaks for it: thresholds over everyone's metrics.
    [
      'thresholds crossed',
      [worker(0, [99, 'some thresholds have failed'], true), worker(1, [0, ''])],
      99,
      'some thresholds have failed',
    ],
    ['all well', [worker(0, [0, ''], true), worker(1, [0, ''])], 0, ''],
    // kill -9 of worker 2: 122, naming it; the summary (worker 1's) still written.
    [
      'a worker killed',
      [worker(0, [108, 'worker died'], true), worker(1, undefined, false, 'SIGKILL')],
      122,
      /engine worker 2 of 2 \(segment 1\/2:1, pid 101\) was killed by SIGKILL before the test ended: the other workers' data are kept/,
    ],
    // setup() threw in worker 1 (index 0): its 107, not the 108 the others were stopped with.
    [
      'setup threw',
      [worker(0, [107, 'setup() threw: boom']), worker(1, [108, 'stopped'], true)],
      107,
      'setup() threw: boom',
    ],
    // The script failed to load in worker 1 before the others started.
    ['init failed', [worker(0, [107, 'SyntaxError'])], 107, 'SyntaxError'],
    [
      'interrupted',
      [worker(0, [105, 'stopped by signal'], true), worker(1, [0, ''])],
      105,
      'stopped by signal',
    ],
  ];
  for (const [name, workers, code, reason] of cases) {
    const ending = decideEnding(workers, 2);
    assert.equal(ending.exitCode, code, name);
    if (typeof reason === 'string') assert.equal(ending.reason, reason, name);
    else assert.match(ending.reason, reason, name);
  }
});
