// The Node/V8 flags the engine process runs with.
//
// V8's default collector hands parts of every young-generation collection to helper
// threads. A load generator is one busy JavaScript thread, often pinned to a core of its
// own or sharing a small machine with its target, so the helpers compete with the very
// thread they should relieve, and at high rates the collections became the engine's start
// lag. With `--single-threaded-gc` the main thread collects alone, which lowered both lag
// and CPU per request (`npm run bench:engine`, docs/engine.md "How it keeps time", Garbage collection). V8
// takes the flag only at process start.

import { ERROR_CODES, PlateauError } from '../contract/index.ts';

/** PLATEAU_ENGINE_GC=single (default) or parallel (V8's default collector). */
export const ENGINE_GC_ENV = 'PLATEAU_ENGINE_GC';

/**
 * With the single-threaded collector (PLATEAU_ENGINE_GC=parallel asks for V8's defaults):
 *
 * - `--no-memory-reducer`: V8's memory reducer collects an isolate's whole heap, several
 *   times, once it looks idle. The main thread of a load test never does; the loader thread
 *   that compiles the engine's TypeScript does, a few seconds in: full collections on the
 *   core the engine is pinned to, in the middle of the test.
 * - `--initial-old-space-size=256` (MB): no full collection until the old generation holds
 *   that much. A full collection does more than pause: V8 also throws away the optimized
 *   code of functions whose embedded objects died since it was compiled, and compiles them
 *   again on the engine's core, so for a second or more the engine falls behind. By
 *   default the first comes within the first seconds of a high-rate test, after the
 *   warm-up rehearsal's garbage; with this it comes minutes in, once (docs/engine.md
 *   "How it keeps time", Full collections).
 * - `--no-allocation-site-pretenuring`: V8 watches where objects are made, and once most
 *   of those from one place outlive a young-generation collection it makes all later ones
 *   there directly in the old generation. Whether it decides so for a place on the
 *   per-request path depends on the moment (the rehearsal's VUs, a slow second); in 10
 *   of 13 runs of the engine it did, and from then on ~1.2 KB of every request's garbage
 *   went to the old generation: it grew ~2.4 MB/s at 2,000 requests/s until a full
 *   collection every 256 MB, so the process's memory swung between ~230 and ~380 MB, each
 *   collection a pause of 80–190 ms. Without it the old generation stays at its ~35 MB
 *   (docs/engine.md "Memory over a long run", `npm run bench:engine-memory`).
 */
const SINGLE_THREAD_FLAGS = [
  '--single-threaded-gc',
  '--no-memory-reducer',
  '--initial-old-space-size=256',
  '--no-allocation-site-pretenuring',
];

/** The flags to start an engine process with, given its environment. */
export function engineNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  const mode = env[ENGINE_GC_ENV];
  if (mode === undefined || mode === '' || mode === 'single') return [...SINGLE_THREAD_FLAGS];
  if (mode === 'parallel') return [];
  throw new PlateauError(ERROR_CODES.INVALID_CONFIG, `${ENGINE_GC_ENV}="${mode}" is not a GC mode`, {
    hint: `set ${ENGINE_GC_ENV}=single (the default) or ${ENGINE_GC_ENV}=parallel, or unset it`,
  });
}

/**
 * Whether this process should start itself again with the engine's flags: it runs
 * `engine run` and lacks one of them.
 */
export function needsEngineRelaunch(argv: readonly string[], execArgv: readonly string[]): boolean {
  if (argv[2] !== 'engine' || argv[3] !== 'run') return false;
  // Under a debugger the process being debugged must be the engine itself.
  if (execArgv.some((flag) => flag.startsWith('--inspect'))) return false;
  return engineNodeFlags().some((flag) => !execArgv.includes(flag));
}
