// The tags of a check's samples, and of a custom metric's samples with tags of their own,
// must share a hidden class ("map") from one sample to the next. Built by spread
// (`{ ...tags, check }`), V8 gave each object a map of its own once the code was optimized:
// a map per sample is old-generation garbage (1–6 MB/s at 2,000 requests/s with one check a
// request, kept until a full collection) and megamorphic code wherever tags are read. V8 says
// whether two objects share a map behind a flag, so this runs in a child process with it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));

test('check and custom-metric samples keep one hidden class for their tags, sample after sample', () => {
  const program = `
    import { TestInstance } from ${JSON.stringify(`${root}engine/test-instance.ts`)};
    const same = new Function('a', 'b', 'return %HaveSameMap(a, b)');
    const instance = new TestInstance({ logger: { log: () => undefined }, env: {}, scriptOptions: () => ({}) });
    const modules = instance.modules;
    const trend = new modules['k6/metrics'].Trend('waiting_ms', true);
    const tags = { check: [], taggedCheck: [], custom: [] };
    instance.runtime.sampleObserver = {
      add: (c) =>
        c.metrics[0].name !== 'checks' ? tags.custom.push(c.tags)
        : c.tags.page ? tags.taggedCheck.push(c.tags) : tags.check.push(c.tags),
    };
    // Enough calls for V8 to optimize them, one kind at a time: the maps multiplied only in
    // code optimized for one kind of call.
    for (let i = 0; i < 5000; i++) modules.k6.check(200, { 'is 200': (s) => s === 200 });
    for (let i = 0; i < 5000; i++) modules.k6.check(200, { 'is 200': (s) => s === 200 }, { page: 'home' });
    for (let i = 0; i < 5000; i++) trend.add(i, { kind: 'probe' });
    const verdict = (list) => ({
      count: list.length,
      firstAndLast: same(list[0], list.at(-1)),
      lastTwo: same(list.at(-2), list.at(-1)),
      tags: list.at(-1),
    });
    process.stdout.write(JSON.stringify({
      check: verdict(tags.check),
      taggedCheck: verdict(tags.taggedCheck),
      custom: verdict(tags.custom),
    }));
    await instance.close();
  `;
  const out = execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', program],
    { cwd: root, encoding: 'utf8' },
  );
  const result = JSON.parse(out) as Record<'check' | 'taggedCheck' | 'custom', Record<string, unknown>>;
  assert.deepEqual(result.check, {
    count: 5000,
    firstAndLast: true,
    lastTwo: true,
    tags: { group: '', check: 'is 200' },
  });
  assert.deepEqual(result.taggedCheck, {
    count: 5000,
    firstAndLast: true,
    lastTwo: true,
    tags: { group: '', page: 'home', check: 'is 200' },
  });
  assert.deepEqual(result.custom, {
    count: 5000,
    firstAndLast: true,
    lastTwo: true,
    tags: { group: '', kind: 'probe' },
  });
});
