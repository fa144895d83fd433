// The `k6` module: check, group, sleep, fail, randomSeed.
import type { IterationContext } from '../context.ts';
import { REWRITTEN_GROUP_BODIES } from '../loader.ts';
import { nowMs, type TestRuntime } from '../runtime.ts';

/**
 * Builds the `k6` module for a run. `check` and `group` are synchronous, as in k6, and
 * refuse async callbacks; a check callback that throws counts as a failed check, then the
 * exception propagates. `sleep` returns a promise (k6's returns undefined; awaiting
 * either is fine), which settles early when the iteration is interrupted.
 */
export function createK6Module(runtime: TestRuntime) {
  function check(value: unknown, sets: Record<string, unknown>, tags: Record<string, string> = {}): boolean {
    const context = runtime.current();
    const group = runtime.group(context?.group ?? '');
    const extra = stringTags(tags);
    let all = true;
    for (const [name, predicate] of Object.entries(sets ?? {})) {
      if (isAsyncFunction(predicate)) {
        throw new Error(`check "${name}" is an async function: check() does not support async functions`);
      }
      // A callback that throws is a failed check, recorded before the exception goes on to
      // end the iteration; the checks after it are not run (k6 v0.49's order).
      let thrown: { error: unknown } | undefined;
      let result: unknown = predicate;
      if (typeof predicate === 'function') {
        try {
          result = predicate(value);
        } catch (error) {
          thrown = { error };
          result = false;
        }
      }
      if (result instanceof Promise) {
        throw new Error(`check "${name}" returned a Promise: check() does not support async functions`);
      }
      const ok = Boolean(result);
      all &&= ok;
      let record = group.checks.get(name);
      if (!record) {
        record = { name, path: `${group.path}::${name}`, passes: 0, fails: 0 };
        group.checks.set(name, record);
      }
      if (ok) record.passes++;
      else record.fails++;
      if (!context?.interrupted) {
        runtime.emitBuiltin(
          'checks',
          ok ? 1 : 0,
          checkTags(runtime, context, extra, name),
          undefined,
          runtime.sampleMetadata(context),
        );
      }
      if (thrown) throw thrown.error;
    }
    return all;
  }

  function group<T>(name: string, fn: () => T): T {
    if (typeof name !== 'string' || name.includes('::')) {
      throw new Error(`group name ${JSON.stringify(name)} is invalid: it may not contain "::"`);
    }
    // A body the loader made async because it makes blocking calls (http.get, sleep) is
    // waited for, inside the group: the VU is in it until the body's last call returns.
    if (REWRITTEN_GROUP_BODIES.has(fn)) return rewrittenGroup(name, fn as () => Promise<unknown>) as T;
    // Refused before it runs, as k6 does: an async body would otherwise start its work
    // (a request) outside the group it was meant for.
    if (isAsyncFunction(fn)) {
      throw new Error(`group "${name}" is an async function: group() does not support async functions`);
    }
    const entered = enterGroup(name);
    try {
      const result = fn();
      if (result instanceof Promise) {
        throw new Error(`group "${name}" returned a Promise: group() does not support async functions`);
      }
      return result;
    } finally {
      leaveGroup(entered);
    }
  }

  async function rewrittenGroup(name: string, fn: () => Promise<unknown>): Promise<unknown> {
    const entered = enterGroup(name);
    try {
      return await fn();
    } finally {
      leaveGroup(entered);
    }
  }

  function enterGroup(name: string): { context: IterationContext; parent: string; started: number } {
    const context = runtime.current();
    if (!context) throw new Error('group() can only be called from a VU, not from the init context');
    const parent = context.group;
    context.group = `${parent}::${name}`;
    runtime.group(context.group);
    return { context, parent, started: nowMs() };
  }

  function leaveGroup({
    context,
    parent,
    started,
  }: {
    context: IterationContext;
    parent: string;
    started: number;
  }) {
    if (!context.interrupted) {
      runtime.emitBuiltin(
        'group_duration',
        nowMs() - started,
        runtime.contextTags(context),
        undefined,
        runtime.sampleMetadata(context),
      );
    }
    context.group = parent;
  }

  function sleep(seconds: number): Promise<void> {
    const context = runtime.current();
    const ms = Math.max(0, Number(seconds) * 1000 || 0);
    if (!context) return new Promise((resolve) => setTimeout(resolve, ms));
    context.pendingSleeps++;
    return new Promise<void>((resolve) => {
      let settled = false;
      const done = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unlisten();
        context.pendingSleeps--;
        resolve();
      };
      const timer = setTimeout(done, ms);
      const unlisten = context.interrupt.onAbort(done);
    });
  }

  function fail(message = ''): never {
    throw new Error(message);
  }

  function randomSeed(seed: number): void {
    runtime.warnOnce(
      'randomSeed',
      `randomSeed(${seed}) is ignored by the embedded engine: Math.random is not seedable in Node`,
    );
  }

  const exports = { check, group, sleep, fail, randomSeed };
  return { default: exports, ...exports };
}

/**
 * A check sample's tags: the context's, the call's own, then `check` (when that system tag
 * is on). Assigned onto the new object contextTags makes, never spread: V8 gave each
 * `{ ...tags, check: name }` a hidden class of its own once the code was optimized, so every
 * check left a map and its descriptors in the old generation (with one check a request, it
 * grew 1–6 MB/s at 2,000 requests/s until a full collection) and made every reader of tags
 * megamorphic.
 */
function checkTags(
  runtime: TestRuntime,
  context: IterationContext | undefined,
  extra: Record<string, string>,
  name: string,
): Record<string, string> {
  const tags = runtime.contextTags(context);
  Object.assign(tags, extra);
  if (runtime.systemTags.check) tags.check = name;
  return tags;
}

function stringTags(tags: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(tags ?? {}).map(([k, v]) => [k, String(v)]));
}

function isAsyncFunction(fn: unknown): boolean {
  return typeof fn === 'function' && fn.constructor?.name === 'AsyncFunction';
}
