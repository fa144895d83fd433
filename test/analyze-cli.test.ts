// `plateau analyze` from the command line: the verdict criteria flags.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plateau } from './helpers/cli.ts';
import { k6RealFixtures } from './helpers/shared-fixtures.ts';

const csv = () => `${k6RealFixtures()}k6-v0.31_2021_csv_groups_trello.csv`;

test('plateau analyze --cpu-saturated re-judges a file and keeps the criteria in analysis.json', async () => {
  const run = await plateau([
    'analyze',
    csv(),
    '--json',
    '--cpu-saturated',
    '150',
    '--following-share',
    '0.8',
  ]);
  assert.equal(run.code, 0, run.stderr);
  const analysis = JSON.parse(run.stdout) as {
    criteria: Record<string, number>;
    verdict: { notes: string[] };
  };
  assert.equal(analysis.criteria.cpuSaturatedPct, 150);
  assert.equal(analysis.criteria.followingShare, 0.8);
  assert.equal(analysis.criteria.poolSaturatedPct, 90, 'the others keep their defaults');
  assert.ok(
    analysis.verdict.notes.some((note) => note.startsWith('judged by criteria other than the defaults')),
    analysis.verdict.notes.join('\n'),
  );
});

test('plateau analyze refuses criteria out of range: exit 104, every problem named with its range', async () => {
  const run = await plateau(['analyze', csv(), '--pool-saturated', '120', '--query-rise', 'high']);
  assert.equal(run.code, 104);
  assert.match(
    run.stderr,
    /--pool-saturated: "120" is not accepted \(use a number from 1 to 100 \(default 90\)\)/,
  );
  assert.match(run.stderr, /--query-rise: "high" is not accepted/);
  assert.equal(run.stdout, '', 'nothing analysed');
});
