// Errors that end a run with one of k6's exit codes.

import { EXIT_CODES } from '../contract/index.ts';

/**
 * The script could not be loaded or threw in init, setup or teardown (exit 107), or setup or
 * teardown ran past its timeout (exit 100 or 101, as k6).
 */
export class ScriptError extends Error {
  readonly exitCode: number;
  constructor(message: string, options?: { cause?: unknown; exitCode?: number }) {
    super(message, options);
    this.name = 'ScriptError';
    this.exitCode = options?.exitCode ?? EXIT_CODES.scriptException;
  }
}
