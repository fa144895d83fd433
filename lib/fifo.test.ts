import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Fifo } from './fifo.ts';

test('Fifo: oldest first, across refills, with its size', () => {
  const queue = new Fifo<number>();
  assert.equal(queue.shift(), undefined);
  queue.push(1);
  queue.push(2);
  assert.equal(queue.size, 2);
  assert.equal(queue.shift(), 1);
  queue.push(3);
  assert.equal(queue.shift(), 2);
  assert.equal(queue.shift(), 3);
  assert.equal(queue.size, 0);
  assert.equal(queue.shift(), undefined, 'empty again');
  queue.push(4);
  assert.equal(queue.size, 1);
  assert.equal(queue.shift(), 4);
});
