import assert from 'node:assert/strict';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { test } from 'node:test';
import { collectGarbage } from './collect-garbage.ts';

/** The kinds of the collections `work` runs, as Node's gc performance entries report them. */
async function collectionsDuring(work: () => void): Promise<number[]> {
  const kinds: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      kinds.push((entry as unknown as { detail: { kind: number } }).detail.kind);
  });
  observer.observe({ entryTypes: ['gc'] });
  try {
    work();
    // gc entries arrive asynchronously.
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    observer.disconnect();
  }
  return kinds;
}

test('collectGarbage("young") runs young-generation collections only', async () => {
  const kinds = await collectionsDuring(() => {
    assert.equal(collectGarbage('young'), true);
    assert.equal(collectGarbage('young'), true, 'a second call reuses the function');
  });
  assert.ok(
    kinds.filter((kind) => kind === constants.NODE_PERFORMANCE_GC_MINOR).length >= 2,
    `kinds: ${kinds}`,
  );
  assert.equal(kinds.includes(constants.NODE_PERFORMANCE_GC_MAJOR), false, `kinds: ${kinds}`);
});

test('collectGarbage("full") runs a full collection, and no gc global is left behind', async () => {
  const kinds = await collectionsDuring(() => assert.equal(collectGarbage('full'), true));
  assert.ok(kinds.includes(constants.NODE_PERFORMANCE_GC_MAJOR), `kinds: ${kinds}`);
  assert.equal('gc' in globalThis, false, 'the script realm gets no gc global');
});
