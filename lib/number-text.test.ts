import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeRange, parseNumberText } from './number-text.ts';

test('decimal text within limits is a number; anything else is not', () => {
  assert.equal(parseNumberText('40'), 40);
  assert.equal(parseNumberText(' 0.5 '), 0.5);
  assert.equal(parseNumberText('-3'), -3);
  for (const bad of ['', ' ', '1e3', '0x10', '4O', '1.', '.5', 'Infinity']) {
    assert.equal(parseNumberText(bad), undefined, JSON.stringify(bad));
  }
  assert.equal(parseNumberText('2.5', { integer: true }), undefined);
  assert.equal(parseNumberText('-1', { min: 0 }), undefined);
  assert.equal(parseNumberText('0', { min: 0, integer: true }), 0);
  assert.equal(parseNumberText('101', { max: 100 }), undefined);
});

test('the accepted range in words', () => {
  assert.equal(describeRange({ min: 0, integer: true }), 'a whole number of at least 0');
  assert.equal(describeRange({ min: 0, max: 1 }), 'a number from 0 to 1');
  assert.equal(describeRange({ max: 5, integer: true }), 'a whole number of at most 5');
  assert.equal(describeRange(), 'a number');
});
