// Process exit statuses, following k6's where the meaning is the same (k6 errext).
import { ERROR_CODES, type ErrorCode } from '../contract/index.ts';

export const EXIT_CODES = {
  ok: 0,
  /** Something failed that has no more specific code. */
  failure: 1,
  /** Thresholds crossed (k6: 99). */
  thresholdsFailed: 99,
  /** Invalid configuration: bad flags, env or files (k6: 104). */
  invalidConfig: 104,
  /** Stopped by SIGINT/SIGTERM (k6: 105). */
  interrupted: 105,
} as const;

/** The exit status the CLI uses for an error of this code. */
export function exitCodeFor(code: ErrorCode): number {
  switch (code) {
    case ERROR_CODES.INVALID_CONFIG:
    case ERROR_CODES.INPUT:
      return EXIT_CODES.invalidConfig;
    case ERROR_CODES.INTERRUPTED:
      return EXIT_CODES.interrupted;
    default:
      return EXIT_CODES.failure;
  }
}
