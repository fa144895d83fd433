// Errors that end a run with one of k6's exit codes.

/** k6's exit codes (errext/exitcodes) that the embedded engine uses. */
export const ENGINE_EXIT_CODES = {
  ok: 0,
  thresholdsFailed: 99,
  invalidConfig: 104,
  interrupted: 105,
  scriptException: 107,
  testAborted: 108,
  testFailed: 110,
} as const;

/** The script could not be loaded or threw in init, setup or teardown (exit 107). */
export class ScriptError extends Error {
  readonly exitCode = ENGINE_EXIT_CODES.scriptException;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ScriptError';
  }
}
