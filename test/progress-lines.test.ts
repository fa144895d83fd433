// The progress a person follows, as a CI log sees it (stderr not a terminal): plain lines
// with the step, the plan's offered rate, the generator's sent and the service's served;
// none with --quiet; stdout left to --json.
// test-run: load
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { plateau } from './helpers/cli.ts';
import { TEST_PAYLOAD } from './helpers/small-study.ts';

const out = await mkdtemp(join(tmpdir(), 'plateau-progress-'));
after(() => rm(out, { recursive: true, force: true }));

const SHORT_STUDY = [
  ...['--set', 'POOL_MAX=2', '--set', 'QUERY_MS=20', ...TEST_PAYLOAD],
  ...['--steps', '20,40', '--hold', '3', '--ramp', '1', '--recovery', '3', '--recovery-rate', '10'],
  ...['--out', out],
];

/** A plain progress line of `step` with the three figures from the three sources. */
const lineOf = (step: string, offered: number) =>
  new RegExp(
    `^step ${step}, \\d+ s left: offered ${offered}/s, sent [\\d.]+/s, served [\\d.]+/s, service p95 [\\d.–]+ m?s, shed [\\d.]+/s, dropped [\\d.]+/s, pool [\\d.]+ of 2 checked out, waiting [\\d.]+$`,
    'm',
  );

test('plateau run without a terminal: one plain line per step (3 s steps), with step, sent and served; stdout is the JSON', async () => {
  const result = await plateau(['run', ...SHORT_STUDY, '--json']);
  assert.equal(result.code, 0, result.stderr);
  const analysis = JSON.parse(result.stdout) as { runDir: string };
  assert.ok(analysis.runDir, 'stdout holds the JSON alone');
  assert.match(result.stderr, /^starting the database$/m);
  assert.match(result.stderr, /^starting the load generator$/m);
  assert.match(result.stderr, lineOf('r020', 20), result.stderr);
  assert.match(result.stderr, lineOf('r040', 40), result.stderr);
  assert.ok(!result.stderr.includes('\r') && !result.stderr.includes('\x1b['), 'no terminal codes in a log');
  // Each step leaves one line (its last, settled second); none is under 10 s long.
  assert.equal(result.stderr.match(/^step r020/gm)?.length, 1, result.stderr);
});

test('plateau run --quiet: no progress at all', async () => {
  const result = await plateau(['run', ...SHORT_STUDY, '--quiet']);
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /^step |starting the database|bundling/m);
  assert.match(result.stdout, /first limit/, 'the record still goes to stdout');
});

test('plateau check without a terminal: a line every 10 s and the last, step check at the constant rate', async () => {
  const check = ['--rate', '20', '--duration', '16', '--set', 'POOL_MAX=2', '--out', out];
  const result = await plateau(['check', ...check]);
  assert.ok(result.code === 0 || result.code === 99, result.stderr);
  const lines = result.stderr.match(/^step check, .*$/gm) ?? [];
  assert.ok(lines.length >= 2, `one at ~10 s and the last:\n${result.stderr}`);
  assert.match(
    result.stderr,
    /^step check, \d+ s left: offered 20\/s, sent [\d.]+\/s, served [\d.]+\/s, service p95 [\d.]+ m?s, shed [\d.]+\/s, dropped [\d.]+\/s, pool [\d.]+ of 2 checked out, waiting [\d.]+$/m,
  );
});
