import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { DatabaseBreaker, type DatabaseTransition } from './database-breaker.ts';

// The breaker's probe timer is unref'd (it must not keep a service's process alive): this
// keeps the test's event loop running while a test waits for a probe.
const keepAlive = setInterval(() => undefined, 1000);
after(() => clearInterval(keepAlive));

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

/** A breaker whose probe answers as `reachable()` says, on a clock the test sets. */
function breaker(reachable: () => boolean, probeIntervalMs = 5) {
  const transitions: DatabaseTransition[] = [];
  const waiters: ((t: DatabaseTransition) => void)[] = [];
  let probes = 0;
  const clock = { ms: 1_000 };
  const b = new DatabaseBreaker(
    { probeIntervalMs },
    async () => {
      probes++;
      if (!reachable()) throw refused();
    },
    (t) => {
      transitions.push(t);
      waiters.shift()?.(t);
    },
    () => clock.ms,
  );
  const next = () => new Promise<DatabaseTransition>((resolve) => waiters.push(resolve));
  return { b, transitions, clock, next, probes: () => probes };
}

test('one error does not open it: a probe decides, and a database that answers keeps it up', async () => {
  const { b, transitions, probes } = breaker(() => true);
  b.suspect(); // e.g. one session ended by pg_terminate_backend
  await b.check(); // joins the probe suspect() started
  assert.equal(b.state, 'up');
  assert.equal(b.allow(), true);
  assert.deepEqual(transitions, []);
  assert.equal(probes(), 1, 'one probe, not two');
  b.stop();
});

test('a failed probe opens it: requests are refused until a probe succeeds, with the time it was down', async () => {
  let reachable = false;
  const { b, clock, next, transitions } = breaker(() => reachable);
  const down = next();
  b.suspect();
  b.suspect(); // more errors while the probe runs start nothing more
  assert.deepEqual(await down, { to: 'down', atMs: 1_000, error: 'connect ECONNREFUSED 127.0.0.1:5432' });
  assert.equal(b.allow(), false);
  assert.equal(b.downSinceMs, 1_000);
  // Its own probes run every interval; the database comes back 4.2 s later.
  clock.ms = 5_200;
  reachable = true;
  const up = await next();
  assert.deepEqual(up, { to: 'up', atMs: 5_200, downMs: 4_200 });
  assert.equal(b.allow(), true);
  assert.equal(b.downSinceMs, undefined);
  assert.equal(transitions.length, 2);
  b.stop();
});

test('while down it probes every interval and never two at once', async () => {
  let inFlight = 0;
  let most = 0;
  let probes = 0;
  let reachable = false;
  let resolveUp: () => void = () => {};
  const upSeen = new Promise<void>((resolve) => {
    resolveUp = resolve;
  });
  const b = new DatabaseBreaker(
    { probeIntervalMs: 2 },
    async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      probes++;
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      if (probes === 6) reachable = true;
      if (!reachable) throw refused();
    },
    (t) => {
      if (t.to === 'up') resolveUp();
    },
  );
  b.suspect();
  b.suspect();
  await upSeen;
  assert.equal(most, 1);
  assert.equal(probes, 6, 'the probes stopped once one succeeded');
  b.stop();
});

test('stop leaves no timer and makes no further transition', async () => {
  const { b, transitions, next, probes } = breaker(() => false, 60_000);
  const down = next();
  b.suspect();
  await down;
  b.stop();
  b.suspect();
  await b.check(); // a probe asked for after stop changes nothing
  assert.equal(transitions.length, 1);
  assert.equal(probes(), 2);
});

test('a probe interval that is not positive is refused', () => {
  assert.throws(() => new DatabaseBreaker({ probeIntervalMs: 0 }, async () => {}), /above 0 ms/);
});
