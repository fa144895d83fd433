import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalHeader, HttpResponse, interruptedResponse, statusText } from './http-response.ts';

test("status_text is Go's: the standard phrase when the server sends none or the standard one", () => {
  assert.equal(statusText(200, 'OK'), '200 OK');
  assert.equal(statusText(503, undefined), '503 Service Unavailable', 'HTTP/2 has no reason phrase');
  assert.equal(statusText(200, 'Fine'), '200 Fine');
  assert.equal(statusText(599, undefined), '599');
});

test("header names take Go's canonical form", () => {
  assert.equal(canonicalHeader('content-type'), 'Content-Type');
  assert.equal(canonicalHeader('retry-after'), 'Retry-After');
  assert.equal(canonicalHeader('x-load-step'), 'X-Load-Step');
  assert.equal(canonicalHeader('etag'), 'Etag');
});

test('res.json parses the text body and follows a dotted selector', () => {
  const res = interruptedResponse('GET', 'http://h/');
  const withBody = new HttpResponse({ ...res, body: '{"a":{"b":[10,20]}}' });
  assert.deepEqual(withBody.json(), { a: { b: [10, 20] } });
  assert.equal(withBody.json('a.b.1'), 20);
  assert.equal(withBody.json('a.c.0'), undefined);
  assert.throws(() => res.json(), /no text body/);
});

test("an interrupted request reads as k6's context canceled", () => {
  const res = interruptedResponse('POST', 'http://h/x');
  assert.equal(res.status, 0);
  assert.equal(res.error, 'context canceled');
  assert.equal(res.error_code, 1000);
  assert.equal(res.timings.duration, 0);
  assert.deepEqual(res.request, { method: 'POST', url: 'http://h/x', headers: {}, body: null });
});
