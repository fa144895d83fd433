// Orderly shutdown: every resource plateau starts registers how to stop it.

/** An async cleanup, and a synchronous last resort for when the process is already exiting. */
export interface Cleanup {
  /** Name used in messages (`embedded postgres`, `statement service`). */
  name: string;
  /** Graceful stop; awaited on signals and on `shutdown()`. */
  stop: () => Promise<void>;
  /** Best effort from the `exit` event, where nothing async can run. */
  stopSync?: () => void;
}

/** What a signal should do once every cleanup ran. */
export interface SignalPolicy {
  /** Exit status after a SIGINT/SIGTERM-triggered shutdown. */
  exitCode: (signal: NodeJS.Signals) => number;
  /** Called once when the first signal arrives, before cleanups run. */
  onSignal?: (signal: NodeJS.Signals) => void;
  /**
   * Awaited after onSignal and before the cleanups: lets the running job stop itself in
   * order (e.g. stop the load, collect the server side, then its service) and save what it
   * gathered. Registered cleanups then stop whatever is left.
   */
  drain?: () => Promise<unknown>;
}

const cleanups: Cleanup[] = [];
let installed = false;
let shuttingDown: Promise<void> | undefined;
let policy: SignalPolicy = { exitCode: (signal) => (signal === 'SIGINT' ? 130 : 143) };

/**
 * Registers a resource to stop on shutdown. Cleanups run last-registered first, so a
 * service registered after its database stops before it. Returns a function that removes
 * the registration (call it after stopping the resource yourself).
 */
export function registerCleanup(cleanup: Cleanup): () => void {
  installHandlers();
  cleanups.push(cleanup);
  return () => {
    const index = cleanups.indexOf(cleanup);
    if (index >= 0) cleanups.splice(index, 1);
  };
}

/** Sets what SIGINT/SIGTERM do after cleanup (exit status, a message). The last call wins. */
export function setSignalPolicy(next: SignalPolicy): void {
  policy = next;
  installHandlers();
}

/**
 * Runs every registered cleanup in reverse order, each once, even when one fails.
 * Errors are reported through `onError` and do not stop the others.
 */
export function shutdown(onError: (name: string, error: unknown) => void = defaultOnError): Promise<void> {
  shuttingDown ??= (async () => {
    while (cleanups.length > 0) {
      const cleanup = cleanups.pop()!;
      try {
        await cleanup.stop();
      } catch (error) {
        onError(cleanup.name, error);
      }
    }
  })();
  return shuttingDown;
}

function defaultOnError(name: string, error: unknown): void {
  process.stderr.write(
    `plateau: stopping ${name} failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
}

function installHandlers(): void {
  if (installed) return;
  installed = true;
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      // A second Ctrl-C while stopping: stop waiting, but still leave nothing behind.
      runSyncCleanups();
      process.exit(policy.exitCode(signal));
    }
    signalled = true;
    void (async () => {
      policy.onSignal?.(signal);
      await policy.drain?.().catch(() => undefined);
      await shutdown();
      process.exit(policy.exitCode(signal));
    })();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  // Last resort: an uncaught error or process.exit() skipped the graceful path.
  process.on('exit', runSyncCleanups);
}

function runSyncCleanups(): void {
  while (cleanups.length > 0) {
    const cleanup = cleanups.pop()!;
    try {
      cleanup.stopSync?.();
    } catch {
      // Nothing more can be done while the process is exiting.
    }
  }
}
