// Garbage collections the engine asks for itself, around its warm-up rehearsal.
//
// - A full collection early in the rehearsal (engine/warm-up.ts). Every rehearsal round is
//   a whole test start of its own, and what a round keeps for its 300 ms (VUs, connections,
//   outputs, metrics) outlives two young-generation collections and moves to the old
//   generation, where it stays after the round as garbage. Left there it cost twice: V8's
//   first full collection came within the test's first seconds (throwing away optimized
//   code: see engine/node-flags.ts, which now defers full collections), and the test's
//   cold start dropped more (`npm run bench:engine`). Not after the last round: a full
//   collection throws code away and shrinks V8's young generation, and the round after one
//   drops many of its starts; the later rounds give the engine that time.
// - A young-generation collection right before the test clock starts. Otherwise the last
//   round's garbage brings the test's first collection within ~90 ms of its start, in the
//   middle of the VUs' first requests, copying whatever of theirs is alive then (new
//   connections, requests in flight), a long pause with the process at full load.
//
// V8 exposes its collector to JavaScript only through `gc`, behind a flag. The flag is set,
// the function taken from a new context (where V8 installs it) and the flag cleared again,
// so the script's own realm never sees a `gc` global.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's gc extension: a full collection, or with `{ type: 'minor' }` a young-generation one. */
type Collect = (options?: { type: 'minor' }) => void;

let collect: Collect | null | undefined;

function gcFunction(): Collect | null {
  if (collect !== undefined) return collect;
  try {
    setFlagsFromString('--expose-gc');
    const found: unknown = runInNewContext('typeof gc === "function" ? gc : null');
    collect = typeof found === 'function' ? (found as Collect) : null;
  } catch {
    collect = null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return collect;
}

/**
 * Runs one collection now: `young` empties the young generation, `full` collects and
 * compacts the whole heap. False when V8 would not give its gc function (nothing ran).
 */
export function collectGarbage(kind: 'young' | 'full'): boolean {
  const gc = gcFunction();
  if (!gc) return false;
  if (kind === 'young') gc({ type: 'minor' });
  else gc();
  return true;
}
