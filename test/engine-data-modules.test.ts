// k6's data-driven helpers in the engine: open() and SharedArray in the init context,
// k6/encoding's base64 variants and k6/crypto's hashes, HMAC and random bytes.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { checkResults, runScript, writeScript } from './helpers/engine.ts';

test('open() and SharedArray load test data in init; k6/encoding and k6/crypto match Node', async () => {
  const sha = createHash('sha256').update('plateau').digest('hex');
  const mac = createHmac('sha256', 'key').update('plateau').digest('base64');
  const script = await writeScript(`
import { check } from 'k6';
import { SharedArray } from 'k6/data';
import encoding from 'k6/encoding';
import crypto from 'k6/crypto';
const users = new SharedArray('users', () => JSON.parse(open('./users.json')));
const again = new SharedArray('users', () => { throw new Error('not called twice'); });
const bytes = open('./users.json', 'b');
export const options = { iterations: 2 };
export default function () {
  check(users, {
    'SharedArray holds the file': (u) => u.length === 2 && u[1].name === 'bo',
    'SharedArray is read-only and shared by name': (u) => Object.isFrozen(u[0]) && again === u,
    'open(path, "b") is an ArrayBuffer': () => bytes instanceof ArrayBuffer && bytes.byteLength > 10,
  });
  check(null, {
    'b64 std and rawurl': () => encoding.b64encode('>>?') === 'Pj4/' && encoding.b64encode('a', 'rawurl') === 'YQ',
    'b64decode to a string': () => encoding.b64decode('aGVsbG8=', 'std', 's') === 'hello',
    'sha256 hex': () => crypto.sha256('plateau', 'hex') === '${sha}',
    'hmac base64': () => crypto.hmac('sha256', 'key', 'plateau', 'base64') === '${mac}',
    'createHash in parts': () => { const h = crypto.createHash('sha256'); h.update('plate'); h.update('au'); return h.digest('hex') === '${sha}'; },
    'randomBytes': () => crypto.randomBytes(16).byteLength === 16,
  });
  try { open('./users.json'); check(null, { 'open() outside init throws': () => false }); }
  catch { check(null, { 'open() outside init throws': () => true }); }
}`);
  await writeFile(join(dirname(script), 'users.json'), JSON.stringify([{ name: 'al' }, { name: 'bo' }]));
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const results = checkResults(run.rows);
  assert.equal(Object.keys(results).length, 10, JSON.stringify(results));
  for (const [name, [passes, fails]] of Object.entries(results)) {
    assert.deepEqual([passes, fails], [2, 0], `${name}: ${passes} passed, ${fails} failed`);
  }
});

test('a missing data file fails the init context with exit 107 and names the file', async () => {
  const run = await runScript(
    await writeScript(`
const data = open('./missing.json');
export default function () {}`),
  );
  assert.equal(run.exitCode, 107);
  assert.ok(
    run.logs.some((l) => l.includes('open ./missing.json: no such file or directory')),
    run.logs.join('\n'),
  );
});
