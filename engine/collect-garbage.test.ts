// test-run: own-process (it watches every collection of its process: another file's garbage
// in a shared one brought a major collection into its window, once in a fresh-clone run)
import assert from 'node:assert/strict';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { test } from 'node:test';
import { collectGarbage } from './collect-garbage.ts';

/**
 * The kinds of the collections `work` runs, as Node's gc performance entries report them,
 * once `enough` holds for them (the entries arrive asynchronously, after `work` returns).
 */
async function collectionsDuring(work: () => void, enough: (kinds: number[]) => boolean): Promise<number[]> {
  const kinds: number[] = [];
  let arrived: () => void = () => undefined;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      kinds.push((entry as unknown as { detail: { kind: number } }).detail.kind);
    if (enough(kinds)) arrived();
  });
  observer.observe({ entryTypes: ['gc'] });
  // The deadline's timer also keeps the process alive until the entries come: the observer does not.
  let deadline: NodeJS.Timeout | undefined;
  try {
    const done = new Promise<void>((resolve, reject) => {
      arrived = resolve;
      deadline = setTimeout(
        () => reject(new Error(`the collections' gc entries never all arrived: kinds ${kinds}`)),
        10_000,
      );
    });
    work();
    await done;
  } finally {
    clearTimeout(deadline);
    observer.disconnect();
  }
  return kinds;
}

const minors = (kinds: number[]) =>
  kinds.filter((kind) => kind === constants.NODE_PERFORMANCE_GC_MINOR).length;

test('collectGarbage("young") runs young-generation collections only', async () => {
  const kinds = await collectionsDuring(
    () => {
      assert.equal(collectGarbage('young'), true);
      assert.equal(collectGarbage('young'), true, 'a second call reuses the function');
    },
    (kinds) => minors(kinds) >= 2,
  );
  // Entries arrive in order: a major one from the two calls would have come with the minors.
  assert.equal(kinds.includes(constants.NODE_PERFORMANCE_GC_MAJOR), false, `kinds: ${kinds}`);
});

test('collectGarbage("full") runs a full collection, and no gc global is left behind', async () => {
  // Resolves only once a major collection's entry came.
  await collectionsDuring(
    () => assert.equal(collectGarbage('full'), true),
    (kinds) => kinds.includes(constants.NODE_PERFORMANCE_GC_MAJOR),
  );
  assert.equal('gc' in globalThis, false, 'the script realm gets no gc global');
});
