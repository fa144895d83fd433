// `k6/data`: SharedArray, the read-only test data data-driven scripts load in init.
import type { TestRuntime } from '../runtime.ts';

/**
 * `k6/data`. `new SharedArray(name, fn)` runs `fn` once, in the init context, and returns
 * a deeply frozen JSON copy of the array it returns: as in k6, where VUs share one
 * read-only copy and changing an element changes nothing.
 */
export function createDataModule(runtime: TestRuntime) {
  const byName = new Map<string, readonly unknown[]>();
  function SharedArray(name: unknown, fn: unknown): readonly unknown[] {
    if (runtime.current() !== undefined) {
      throw new Error(
        'new SharedArray() must be called in the init context (at the top level of the script)',
      );
    }
    const key = String(name);
    if (key === '') throw new Error('a SharedArray needs a name');
    const known = byName.get(key);
    if (known) return known;
    if (typeof fn !== 'function')
      throw new Error(`SharedArray "${key}" needs a function that returns an array`);
    const value = (fn as () => unknown)();
    if (!Array.isArray(value)) throw new Error(`only arrays can be made into a SharedArray ("${key}")`);
    const shared = deepFreeze(JSON.parse(JSON.stringify(value))) as readonly unknown[];
    byName.set(key, shared);
    return shared;
  }
  const exports = { SharedArray };
  return { default: exports, ...exports };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
