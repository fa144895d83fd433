import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classify, ERRORS } from './http-errors.ts';

const err = (code: string, message = code) => Object.assign(new Error(message), { code });

test("transport failures map to k6's error codes", () => {
  assert.deepEqual(classify(err('ECONNREFUSED'), false), ERRORS.refused);
  assert.deepEqual(classify(err('ECONNRESET'), false), ERRORS.reset);
  assert.deepEqual(classify(err('ENOTFOUND'), false), ERRORS.noHost);
  assert.deepEqual(classify(err('UND_ERR_CONNECT_TIMEOUT'), false), ERRORS.dialTimeout);
  assert.deepEqual(classify(err('DEPTH_ZERO_SELF_SIGNED_CERT'), false), ERRORS.unknownAuthority);
  assert.deepEqual(classify(Object.assign(err('ERR_TLS_CERT_ALTNAME_INVALID'), { host: 'h' }), false), [
    1311,
    'tls: failed to verify certificate: x509: certificate is not valid for h',
  ]);
  assert.equal(classify(err('ERR_SSL_WRONG_VERSION_NUMBER', 'wrong version'), false)[0], 1300);
  assert.deepEqual(classify(err('ANYTHING', 'boom'), false), [1000, 'boom']);
  // A timeout wins over whatever error the aborted request then reports.
  assert.deepEqual(classify(err('ECONNRESET'), true), ERRORS.timeout);
});
