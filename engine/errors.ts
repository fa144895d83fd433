// Errors that end a run with one of k6's exit codes.

/** k6's exit codes (errext/exitcodes) that the embedded engine uses. */
export const ENGINE_EXIT_CODES = {
  ok: 0,
  thresholdsFailed: 99,
  /** setup() ran past setupTimeout (k6: 100). */
  setupTimeout: 100,
  /** teardown() ran past teardownTimeout (k6: 101). */
  teardownTimeout: 101,
  invalidConfig: 104,
  interrupted: 105,
  scriptException: 107,
  testAborted: 108,
  testFailed: 110,
} as const;

/**
 * The script could not be loaded or threw in init, setup or teardown (exit 107), or setup or
 * teardown ran past its timeout (exit 100 or 101, as k6).
 */
export class ScriptError extends Error {
  readonly exitCode: number;
  constructor(message: string, options?: { cause?: unknown; exitCode?: number }) {
    super(message, options);
    this.name = 'ScriptError';
    this.exitCode = options?.exitCode ?? ENGINE_EXIT_CODES.scriptException;
  }
}
