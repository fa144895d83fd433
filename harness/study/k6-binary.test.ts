import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isPlateauError } from '../../contract/index.ts';
import { parseK6Version, requireK6For, vetK6Binary } from './k6-binary.ts';

const dir = await mkdtemp(join(tmpdir(), 'plateau-k6-bin-'));
after(() => rm(dir, { recursive: true, force: true }));

/** A stand-in executable that prints `versionLine` for `version`. */
async function fakeK6(name: string, versionLine: string, mode = 0o755): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\necho '${versionLine}'\n`);
  await chmod(path, mode);
  return path;
}

function rejects(fn: () => unknown, message: RegExp, hint: RegExp) {
  assert.throws(fn, (error: unknown) => {
    assert.ok(isPlateauError(error), String(error));
    assert.match(error.message, message);
    assert.match(error.hint ?? '', hint);
    assert.equal(error.code, 'PLATEAU_INVALID_CONFIG', 'exit 104, like any bad option');
    return true;
  });
}

test('a k6 that answers its version is accepted; v0.43 is the oldest', async () => {
  const ok = await fakeK6('k6-49', 'k6 v0.49.0 (go1.19.8, linux/amd64)');
  assert.deepEqual(vetK6Binary(ok), { path: ok, version: 'k6 v0.49.0 (go1.19.8, linux/amd64)' });
  assert.ok(vetK6Binary(await fakeK6('k6-43', 'k6 v0.43.1 (x)')));
  assert.ok(vetK6Binary(await fakeK6('k6-2', 'k6 v2.0.0 (x)')));
  // Found on PATH by name, as `k6` would be.
  assert.equal(vetK6Binary('k6-49', { PATH: `/nonexistent:${dir}` }).path, ok);
});

test('missing, not executable, not k6 and too old are each named with the fix', async () => {
  rejects(
    () => vetK6Binary('/nonexistent/k6'),
    /k6 not found: \/nonexistent\/k6 does not exist/,
    /install k6/,
  );
  rejects(() => vetK6Binary('k6-nowhere', { PATH: dir }), /k6-nowhere is not on PATH/, /--k6-bin or K6_BIN/);
  const plain = await fakeK6('k6-plain', 'k6 v0.49.0', 0o644);
  rejects(() => vetK6Binary(plain), /is not an executable file/, /chmod \+x/);
  rejects(() => vetK6Binary(dir), /is not an executable file/, /install k6/);
  const notK6 = await fakeK6('not-k6', 'hello');
  const old = await fakeK6('k6-old', 'k6 v0.42.0 (go1.19, linux/amd64)');
  rejects(() => vetK6Binary(notK6), /does not look like k6: its version says "hello"/, /install k6/);
  rejects(
    () => vetK6Binary(old),
    /k6 v0.42.0 is older than plateau supports \(k6 v0.43 or later\)/,
    /upgrade k6, or use --engine embedded/,
  );
});

test('version lines of k6 releases parse; other text does not', () => {
  assert.deepEqual(parseK6Version('k6 v0.49.0 (go1.19.8, linux/amd64)'), { major: 0, minor: 49 });
  assert.deepEqual(parseK6Version('k6 v1.0.0-fake (plateau test stand-in)'), { major: 1, minor: 0 });
  assert.equal(parseK6Version('v0.49.0'), undefined);
});

test('a bundle importing a module newer than the k6 is refused with the release that added it', () => {
  assert.throws(
    () => requireK6For(['k6/http', 'k6/timers'], 'k6 v0.49.0 (go1.19.8, linux/amd64)'),
    (error: unknown) =>
      isPlateauError(error) &&
      /imports k6\/timers, which k6 has from v0.50; k6 v0.49.0 does not/.test(error.message) &&
      /k6\/experimental\/timers/.test(error.hint ?? ''),
  );
  requireK6For(['k6/http', 'k6/timers'], 'k6 v0.50.0 (x)');
  requireK6For(['k6/experimental/timers'], 'k6 v0.49.0 (x)');
  requireK6For(['k6/timers'], 'something else');
});
