import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { compressBody, decodeBody, encodeBody, FileData } from './http-body.ts';

test('bodies encode as k6 sends them: text, bytes, a form, or multipart when a file is among the fields', () => {
  const headers: Record<string, string> = {};
  assert.equal(encodeBody(undefined, headers), undefined);
  assert.equal(encodeBody('a=1', headers)?.toString(), 'a=1');
  assert.deepEqual([...(encodeBody(new Uint8Array([1, 2]), headers) ?? [])], [1, 2]);
  assert.equal(encodeBody({ a: 1, b: 'x y' }, headers)?.toString(), 'a=1&b=x+y');
  assert.equal(headers['Content-Type'], 'application/x-www-form-urlencoded');
  const multipart: Record<string, string> = {};
  const body = encodeBody(
    { field: 'v', file: new FileData('DATA', 'f.txt', 'text/plain') },
    multipart,
  )!.toString();
  const boundary = /boundary=(\w+)/.exec(multipart['Content-Type'] ?? '')?.[1];
  assert.ok(boundary);
  assert.match(body, /name="field"\r\n\r\nv\r\n/);
  assert.match(body, /name="file"; filename="f\.txt"\r\nContent-Type: text\/plain\r\n\r\nDATA\r\n/);
  assert.ok(body.endsWith(`--${boundary}--\r\n`));
});

test('compression sets Content-Encoding and refuses what it cannot do', () => {
  const headers: Record<string, string> = {};
  const compressed = compressBody(Buffer.from('hello'), 'gzip', headers);
  assert.ok(Buffer.isBuffer(compressed));
  assert.equal(headers['Content-Encoding'], 'gzip');
  assert.match(String(compressBody(Buffer.from('x'), 'zstd', {})), /Node 20 has no zstd/);
  assert.match(
    String(compressBody(Buffer.from('x'), 'gzip', { 'content-encoding': 'br' })),
    /sets Content-Encoding itself/,
  );
});

test('response bodies decode per Content-Encoding; a bad one gives the 1701 message, a discarded one nothing', () => {
  const gz = gzipSync(Buffer.from('{"a":1}'));
  assert.deepEqual(decodeBody([gz], 'text', { 'Content-Encoding': 'gzip' }), { body: '{"a":1}' });
  assert.equal(decodeBody([gz], 'none', { 'Content-Encoding': 'gzip' }).body, null);
  assert.match(
    decodeBody([Buffer.from('x')], 'text', { 'Content-Encoding': 'zstd' }).error ?? '',
    /unsupported content encoding "zstd"/,
  );
  assert.match(
    decodeBody([Buffer.from('not gzip')], 'text', { 'Content-Encoding': 'gzip' }).error ?? '',
    /error decompressing the gzip body/,
  );
  const binary = decodeBody([Buffer.from([7, 8])], 'binary', {}).body as ArrayBuffer;
  assert.deepEqual([...new Uint8Array(binary)], [7, 8]);
});
