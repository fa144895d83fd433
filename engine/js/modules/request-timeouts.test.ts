// Request timeouts share one timer per timeout length: entries expire in order, at their
// time, and an entry that was cancelled never expires.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Expiring, RequestTimeouts } from './request-timeouts.ts';

function entry(name: string, expired: { name: string; lateMs: number }[]): Expiring {
  const item: Expiring = {
    expiresAt: 0,
    timeoutPrev: undefined,
    timeoutNext: undefined,
    timeoutList: undefined,
    expire: () => expired.push({ name, lateMs: performance.now() - item.expiresAt }),
  };
  return item;
}

test('entries of one length expire in start order, on time; cancelled ones do not', async () => {
  const timeouts = new RequestTimeouts(() => performance.now());
  const expired: { name: string; lateMs: number }[] = [];
  const a = entry('a', expired);
  const b = entry('b', expired);
  const c = entry('c', expired);
  const d = entry('d', expired);
  timeouts.start(a, 40);
  await sleep(10);
  timeouts.start(b, 40);
  timeouts.start(c, 40);
  await sleep(10);
  timeouts.start(d, 40);
  timeouts.cancel(a); // the head leaves: the armed timer must move on to b
  timeouts.cancel(c); // one from the middle
  await sleep(120);
  assert.deepEqual(
    expired.map((e) => e.name),
    ['b', 'd'],
  );
  for (const e of expired)
    assert.ok(e.lateMs >= -1 && e.lateMs < 1000, `${e.name} expired ${e.lateMs} ms late`);
  timeouts.cancel(b); // already expired: nothing happens
});

test('lengths keep separate lists; clear() cancels everything', async () => {
  const timeouts = new RequestTimeouts(() => performance.now());
  const expired: { name: string; lateMs: number }[] = [];
  timeouts.start(entry('long', expired), 60);
  timeouts.start(entry('short', expired), 20);
  await sleep(40);
  assert.deepEqual(
    expired.map((e) => e.name),
    ['short'],
  );
  timeouts.clear();
  await sleep(50);
  assert.deepEqual(
    expired.map((e) => e.name),
    ['short'],
    'clear() cancelled the long one',
  );
});
