import assert from 'node:assert/strict';
import { test } from 'node:test';
import { maskCredentials, parseUrl } from './http-url.ts';

test('the fast path and WHATWG URL give the same parts', () => {
  assert.deepEqual(parseUrl('http://127.0.0.1:8080/statement?account=1'), {
    origin: 'http://127.0.0.1:8080',
    host: '127.0.0.1:8080',
    hostname: '127.0.0.1',
    port: 8080,
    path: '/statement?account=1',
    basicAuth: '',
  });
  assert.deepEqual(parseUrl('https://[::1]/'), {
    origin: 'https://[::1]',
    host: '[::1]',
    hostname: '::1',
    port: 443,
    path: '/',
    basicAuth: '',
  });
  // Not the fast path's shape: a fragment, and credentials.
  const slow = parseUrl('http://u%40x:p@localhost/a#frag');
  assert.equal(slow?.path, '/a');
  assert.equal(slow?.port, 80);
  assert.equal(slow?.basicAuth, `Basic ${Buffer.from('u@x:p').toString('base64')}`);
});

test('only http and https URLs parse; credentials are masked in tags as k6 does', () => {
  assert.equal(parseUrl('ftp://host/x'), undefined);
  assert.equal(parseUrl('not a url'), undefined);
  assert.equal(maskCredentials('http://user:secret@host/p'), 'http://****:****@host/p');
  assert.equal(maskCredentials('http://host/p'), 'http://host/p');
});
