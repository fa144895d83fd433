import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ConfigProblem } from '../../contract/index.ts';
import { ExecutionTuple, parseSegment, parseSequence } from '../schedule/execution-segment.ts';
import { autoWorkers, parseWorkers, partPath, type WorkersContext, workerSegments } from './worker-plan.ts';

const EIGHT_CORES: WorkersContext = { cores: 8, reservedCores: 1, segmented: false, outputToStdout: false };

function parse(text: string, context: Partial<WorkersContext> = {}) {
  const problems: ConfigProblem[] = [];
  const count = parseWorkers(text, { ...EIGHT_CORES, ...context }, problems);
  return { count, problems: problems.map((p) => `${p.setting}: ${p.message} (${p.hint})`) };
}

test('auto is the cores less what a local target needs, at least one', () => {
  const cases: [cores: number, reserved: number, workers: number][] = [
    [8, 1, 7], // plateau engine run on 8 cores: one left for a target here
    [2, 1, 1], // this 2-core machine
    [1, 1, 1], // one core: still one worker
    [16, 3, 13], // a study with its service and database on the machine
    [64, 0, 64], // a load machine of its own against a remote target
  ];
  for (const [cores, reserved, workers] of cases) assert.equal(autoWorkers(cores, reserved), workers);
  assert.equal(parse('auto').count, 7);
});

test('--workers takes 1 to the cores or auto; each bad value is a problem naming the fix', () => {
  assert.deepEqual(parse('4'), { count: 4, problems: [] });
  assert.deepEqual(parse('8'), { count: 8, problems: [] });
  const cases: [text: string, context: Partial<WorkersContext>, expected: RegExp][] = [
    ['0', {}, /0 workers would run no engine at all \(give 1 to 8, or auto \(here 7\)/],
    ['9', {}, /9 workers are more than the 8 cores .*give at most 8, or auto: .*delay each other's starts/],
    ['many', {}, /"many" is not a number of workers \(give a whole number/],
    ['-1', {}, /"-1" is not a number of workers/],
    ['2', { segmented: true }, /cannot be given with --execution-segment.*--workers alone/],
    ['2', { outputToStdout: true }, /cannot write an output to stdout.*give --out a file/],
  ];
  for (const [text, context, expected] of cases) {
    const { count, problems } = parse(text, context);
    assert.equal(count, undefined, text);
    assert.equal(problems.length, 1, text);
    assert.match(problems[0]!, expected);
  }
});

test('N workers run equal segments whose striped union is every iteration once', () => {
  assert.deepEqual(workerSegments(1), [{ segment: '0:1', sequence: '0,1' }]);
  const four = workerSegments(4);
  assert.deepEqual(
    four.map((w) => w.segment),
    ['0:1/4', '1/4:1/2', '1/2:3/4', '3/4:1'],
  );
  assert.equal(four[0]!.sequence, '0,1/4,1/2,3/4,1');
  // Each worker's share of 1,000 iterations, by k6's striping: 250 each, 1,000 in all.
  const shares = four.map(({ segment, sequence }) =>
    ExecutionTuple.create(parseSegment(segment), parseSequence(sequence)).scale(1000),
  );
  assert.deepEqual(shares, [250, 250, 250, 250]);
  const three = workerSegments(3).map(({ segment, sequence }) =>
    ExecutionTuple.create(parseSegment(segment), parseSequence(sequence)).scale(10),
  );
  assert.equal(
    three.reduce((a, b) => a + b, 0),
    10,
    'uneven shares still add up',
  );
});

test('worker 0 writes the output itself; the others write parts beside it, gzipped alike', () => {
  assert.equal(partPath('runs/x/k6.csv.gz', 0), 'runs/x/k6.csv.gz');
  assert.equal(partPath('runs/x/k6.csv.gz', 2), 'runs/x/k6.part2.csv.gz');
  assert.equal(partPath('out.ndjson', 1), 'out.part1.ndjson');
  assert.equal(partPath('results', 1), 'results.part1');
  assert.equal(partPath('/tmp/.hidden.csv', 1), '/tmp/.hidden.part1.csv');
});
