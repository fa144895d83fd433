import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestMoments } from './http-timings.ts';

function moments(fields: Partial<RequestMoments>): RequestMoments {
  return Object.assign(new RequestMoments(fields.created ?? 100), fields);
}

test('a new connection: blocked includes the dial, sending starts after the TLS handshake', () => {
  const m = moments({ created: 100, connectStart: 101, connectDone: 103, tlsDone: 106, assigned: 106 });
  m.written = 107;
  m.firstByte = 157;
  assert.deepEqual(m.timings(160), {
    blocked: 6,
    connecting: 2,
    tls_handshaking: 3,
    sending: 1,
    waiting: 50,
    receiving: 3,
    duration: 54,
  });
});

test('a reused connection: no dial, sending from the hand-over', () => {
  const m = moments({ created: 100, assigned: 100.5, written: 101, firstByte: 151 });
  const t = m.timings(152);
  assert.equal(t.blocked, 0.5);
  assert.equal(t.connecting, 0);
  assert.equal(t.tls_handshaking, 0);
  assert.equal(t.sending, 0.5);
  assert.equal(t.duration, 0.5 + 50 + 1);
});

test('a request that timed out before its first byte waited until it gave up, as on k6 v0.49', () => {
  // k6 v0.49 against a server that never answers, timeout 300ms: http_req_waiting 291.5 ms,
  // http_req_duration 291.7 ms (a timeout counts at the deadline in latency and in flight).
  const m = moments({ created: 100, assigned: 100, written: 101 });
  const t = m.timings(2101);
  assert.equal(t.waiting, 2000);
  assert.equal(t.receiving, 0);
  assert.equal(t.duration, 2001);
});

test('a request that never got a connection has all-zero timings', () => {
  const timings = moments({ created: 100 }).timings(200);
  assert.equal(Object.keys(timings).length, 7);
  for (const [name, value] of Object.entries(timings)) assert.equal(value, 0, name);
});
