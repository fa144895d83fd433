import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProbeReport } from '../../contract/index.ts';
import { decisiveTags, repeatGiven } from './find-steps.ts';

/** A probe that saw the knee at `kneePerSec` (null: none). */
const probe = (kneePerSec: number | null): ProbeReport => ({
  kind: 'plateau.probe',
  schemaVersion: 1,
  plan: { ratesPerSec: [2, 4, 8, 16, 32, 64, 128], holdSeconds: 3, rampSeconds: 1 },
  steps: [],
  stop: { reason: kneePerSec === null ? 'generator' : 'knee', atStep: 'p128', words: '' },
  firstSign: null,
  plateauPerSec: kneePerSec,
  kneePerSec,
});

test('given steps: the probe picks which to repeat, and repeats none it cannot place', () => {
  // The reference service's seed steps with a knee near 71/s: 70 below it, 80 the plateau's (80 × 0.9 > 71).
  assert.deepEqual(repeatGiven([20, 40, 60, 70, 80, 90, 110], probe(71), 0.9), {
    sequence: [20, 40, 60, 70, 80, 20, 70, 90, 110, 80],
    decisive: { below: 70, plateau: 80 },
  });
  // No knee seen (the generator's limit came first): the steps as given.
  assert.deepEqual(repeatGiven([20, 40], probe(null), 0.9).sequence, [20, 40]);
  // Steps that already repeat some of their own are left as written.
  assert.deepEqual(repeatGiven([20, 40, 20], probe(30), 0.9).sequence, [20, 40, 20]);
});

test('the decisive steps a sequence runs again, by the tags of their first run', () => {
  assert.deepEqual(decisiveTags([20, 40, 60, 70, 80, 20, 70, 90, 110, 80], { below: 70, plateau: 80 }), [
    'r070',
    'r080',
  ]);
  assert.deepEqual(decisiveTags([20, 40], { below: null, plateau: null }), []);
});
