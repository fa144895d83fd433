import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { digestAuthorization, parseDigestChallenge } from './digest-auth.ts';

const h = (name: 'md5' | 'sha256', text: string) => createHash(name).update(text).digest('hex');

test('a Digest challenge is read from WWW-Authenticate, quoted commas and other schemes included', () => {
  const challenge = parseDigestChallenge(
    'Basic realm="x", Digest realm="a, b", nonce="n1", qop="auth,auth-int", algorithm=SHA-256, opaque="o"',
  );
  assert.deepEqual(challenge, {
    realm: 'a, b',
    nonce: 'n1',
    opaque: 'o',
    algorithm: 'SHA-256',
    qop: ['auth', 'auth-int'],
  });
  assert.equal(parseDigestChallenge('Basic realm="x"'), undefined);
  assert.equal(parseDigestChallenge(undefined), undefined);
});

test('the answer follows RFC 7616: qop auth, -sess variants, RFC 2069 without qop, unknown algorithms refused', () => {
  const base = { realm: 'r', nonce: 'n', opaque: undefined, qop: ['auth'] };
  const sha = digestAuthorization(
    { ...base, algorithm: 'SHA-256-sess' },
    'POST',
    '/p?q=1',
    'u',
    'pw',
    'c0ffee',
  );
  const ha1 = h('sha256', `${h('sha256', 'u:r:pw')}:n:c0ffee`);
  const expected = h('sha256', `${ha1}:n:00000001:c0ffee:auth:${h('sha256', 'POST:/p?q=1')}`);
  assert.equal(
    sha,
    `Digest username="u", realm="r", nonce="n", uri="/p?q=1", algorithm=SHA-256-sess, response="${expected}", qop=auth, nc=00000001, cnonce="c0ffee"`,
  );
  const legacy = digestAuthorization({ ...base, qop: [], algorithm: 'MD5' }, 'GET', '/', 'u', 'pw');
  const md5 = h('md5', `${h('md5', 'u:r:pw')}:n:${h('md5', 'GET:/')}`);
  assert.equal(
    legacy,
    `Digest username="u", realm="r", nonce="n", uri="/", algorithm=MD5, response="${md5}"`,
  );
  assert.equal(digestAuthorization({ ...base, algorithm: 'SHA-512-256' }, 'GET', '/', 'u', 'pw'), undefined);
});
