// `plateau run --find` on real k6: the probe and the study run as k6 scripts, and place the
// same kind of steps as on the embedded engine (test/find-steps.test.ts).
// test-run: load
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { plateau } from './helpers/cli.ts';
import { assertFound, POOL_OF_TWO } from './helpers/find-study.ts';
import { findRealK6 } from './helpers/real-k6.ts';
import { newRunDirIn } from './helpers/run-dirs.ts';

const out = await mkdtemp(join(tmpdir(), 'plateau-find-k6-'));
after(() => rm(out, { recursive: true, force: true }));

test('--find on real k6 places the same kind of steps', async (t) => {
  const k6 = findRealK6();
  if (typeof k6 === 'string') return t.skip(k6);
  const before = existsSync(out) ? readdirSync(out) : [];
  const result = await plateau([
    'run',
    '--find',
    '--budget',
    '80s',
    ...POOL_OF_TWO,
    '--engine',
    'k6',
    '--k6-bin',
    k6.bin,
    '-q',
    '--out',
    out,
  ]);
  assert.equal(result.code, 0, result.stderr);
  const { manifest } = await assertFound(await newRunDirIn(out, before), 80);
  assert.equal(manifest.engine.name, 'k6');
});
