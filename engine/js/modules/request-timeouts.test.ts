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

/** Keeps this process busy for `ms`: time passes between two starts, and no timer can fire. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Synchronous, unlike a sleep: the cancels below come before any timeout can fire.
  }
}

test('entries of one length expire in start order, on time; cancelled ones do not', async () => {
  const timeouts = new RequestTimeouts(() => performance.now());
  const expired: { name: string; lateMs: number }[] = [];
  const a = entry('a', expired);
  const b = entry('b', expired);
  const c = entry('c', expired);
  let dExpired: () => void = () => undefined;
  const d = entry('d', expired);
  const expireD = d.expire;
  d.expire = () => {
    expireD();
    dExpired();
  };
  timeouts.start(a, 40);
  spin(10);
  timeouts.start(b, 40);
  timeouts.start(c, 40);
  spin(10);
  timeouts.start(d, 40);
  timeouts.cancel(a); // the head leaves: the armed timer must move on to b
  timeouts.cancel(c); // one from the middle
  // The last entry's expiry is the event; b and c, ahead of it in the list, are settled by
  // then. The deadline's timer also keeps the process alive (the list's own is unref'd).
  let deadline: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve, reject) => {
    dExpired = resolve;
    deadline = setTimeout(() => reject(new Error(`d never expired: ${JSON.stringify(expired)}`)), 10_000);
  });
  clearTimeout(deadline);
  assert.deepEqual(
    expired.map((e) => e.name),
    ['b', 'd'],
  );
  // Never early; how late a timer fires is the machine's (the deadline bounds it).
  for (const e of expired) assert.ok(e.lateMs >= -1, `${e.name} expired ${-e.lateMs} ms early`);
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
