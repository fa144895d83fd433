import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stepKeyFromHeader } from './step-key.ts';

test('step keys: valid tags pass through, everything else is bounded', () => {
  const cases: [string | string[] | undefined, string][] = [
    ['r020', 'r020'], // a ramp step
    ['r1500', 'r1500'], // wide rates keep every digit
    ['drain', 'drain'],
    ['a.b-c_D9', 'a.b-c_D9'], // the whole allowed alphabet
    ['x'.repeat(32), 'x'.repeat(32)], // the longest accepted key
    ['x'.repeat(33), 'invalid'], // one character too long
    ['', 'invalid'], // present but empty
    ['r020, r040', 'invalid'], // a repeated header, joined by node
    [['r020', 'r040'], 'invalid'], // the array form
    ['<script>', 'invalid'], // markup
    ['r 020', 'invalid'], // spaces
    ['stép', 'invalid'], // non-ASCII
    [undefined, 'untagged'], // no header at all
  ];
  for (const [header, expected] of cases) {
    assert.equal(stepKeyFromHeader(header), expected, `header ${JSON.stringify(header)}`);
  }
});
