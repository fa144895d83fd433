import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { parseAccount, renderStatement, renderStatementGzip } from './statement.ts';

test('a statement is about PAYLOAD_KB of JSON and identical for the same account', () => {
  const text = renderStatement(42, 88);
  const bytes = Buffer.byteLength(text);
  assert.ok(bytes >= 88 * 1024 && bytes < 88 * 1024 + 300, `88 KiB and under one line more, got ${bytes}`);
  const parsed = JSON.parse(text) as { account: number; transactions: unknown[] };
  assert.equal(parsed.account, 42);
  assert.ok(parsed.transactions.length > 100);
  assert.equal(renderStatement(42, 88), text, 'deterministic');
  assert.notEqual(renderStatement(43, 88), text, 'another account, another statement');
});

test('the gzip body decodes to the statement', () => {
  const body = renderStatementGzip(7, 88);
  assert.equal(gunzipSync(body).toString('utf8'), renderStatement(7, 88));
  assert.ok(body.length < 88 * 1024, 'compressed');
});

test('account ids: integers 0 ≤ id < 10^9 only', () => {
  const cases: [string | null, number | undefined][] = [
    ['0', 0],
    ['42', 42],
    ['999999999', 999_999_999], // the largest id
    ['1000000000', undefined], // 10^9 is out of range
    ['-1', undefined],
    ['1.5', undefined],
    ['1e3', undefined], // Number() would accept it
    [' 42', undefined],
    ['0x10', undefined],
    ['', undefined],
    ['abc', undefined],
    ['99999999999999999999', undefined], // beyond Number precision
    [null, undefined], // missing parameter
  ];
  for (const [raw, expected] of cases) assert.equal(parseAccount(raw), expected, `account=${raw}`);
});
