// esbuild's build(), with its service stopped once no build in this process has been in
// flight for a moment.
//
// Why: esbuild runs its builds in a Go service process (~13 MB resident) that otherwise lives
// as long as the process that started it: in every engine worker, for a script bundled once,
// and in a one-hour test that is memory held for nothing. The next build starts another
// service (milliseconds); the pause before stopping spares a process that builds several
// scripts in a row (a test file running the engine in-process) a service start for each.
import * as esbuild from 'esbuild';

/** How long the service may stay idle before it is stopped. */
const IDLE_MS = 1_000;

let building = 0;
let idleTimer: NodeJS.Timeout | undefined;

/** esbuild.build, the same options and result. */
export const build = (async (options: esbuild.BuildOptions) => {
  building++;
  clearTimeout(idleTimer);
  try {
    return await esbuild.build(options);
  } finally {
    if (--building === 0) {
      // Unref'd: a process that is done does not wait for it (nor for the service, which
      // esbuild unrefs too).
      idleTimer = setTimeout(() => void esbuild.stop(), IDLE_MS).unref();
    }
  }
}) as typeof esbuild.build;
