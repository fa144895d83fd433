// The one error type plateau raises for problems a user can fix.
import { EXIT_CODES, type ExitCode } from './exit-codes.ts';

/** Stable error codes: scripts may match on them, so never rename one. */
export const ERROR_CODES = {
  /** A setting (env var, flag, config field) has a value outside what is accepted. */
  INVALID_CONFIG: 'PLATEAU_INVALID_CONFIG',
  /** The database could not be started, reached or queried. */
  DATABASE: 'PLATEAU_DATABASE',
  /** A file plateau needs is missing, unreadable or malformed. */
  INPUT: 'PLATEAU_INPUT',
  /** Something plateau started (service, engine, k6) failed. */
  CHILD_FAILED: 'PLATEAU_CHILD_FAILED',
  /** The run was interrupted by SIGINT/SIGTERM. */
  INTERRUPTED: 'PLATEAU_INTERRUPTED',
  /** The service under test died during a study. */
  SERVICE_DIED: 'PLATEAU_SERVICE_DIED',
  /** The database plateau started for a study died during it. */
  DATABASE_DIED: 'PLATEAU_DATABASE_DIED',
  /** The load generator died during a study. */
  GENERATOR_DIED: 'PLATEAU_GENERATOR_DIED',
  /** The disk holding the run directory filled. */
  DISK_FULL: 'PLATEAU_DISK_FULL',
  /**
   * The probe of `plateau run --find` could not place the steps: the generator reached its
   * limit first, the service failed from the first request, or the budget ran out.
   */
  NO_KNEE: 'PLATEAU_NO_KNEE',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** The exit status each error code ends the process with (k6's errext idea: the error carries it). */
const EXIT_CODE_OF: Record<ErrorCode, ExitCode> = {
  [ERROR_CODES.INVALID_CONFIG]: EXIT_CODES.invalidConfig,
  [ERROR_CODES.INPUT]: EXIT_CODES.invalidConfig,
  [ERROR_CODES.INTERRUPTED]: EXIT_CODES.interrupted,
  [ERROR_CODES.DATABASE]: EXIT_CODES.failure,
  [ERROR_CODES.CHILD_FAILED]: EXIT_CODES.failure,
  [ERROR_CODES.SERVICE_DIED]: EXIT_CODES.serviceDied,
  [ERROR_CODES.DATABASE_DIED]: EXIT_CODES.databaseDied,
  [ERROR_CODES.GENERATOR_DIED]: EXIT_CODES.generatorDied,
  [ERROR_CODES.DISK_FULL]: EXIT_CODES.diskFull,
  [ERROR_CODES.NO_KNEE]: EXIT_CODES.failure,
};

/** One problem found while validating configuration, with the way out. */
export interface ConfigProblem {
  /** The setting's name as the user wrote it (`POOL_MAX`, `--steps`). */
  setting: string;
  /** What is wrong, including the offending value. */
  message: string;
  /** What the user should do instead (the accepted range or form). */
  hint: string;
}

/**
 * An error a user can act on: a stable `code`, a `hint` saying what to do, and the
 * underlying `cause`. The CLI prints `message` and `hint`, never a stack trace, and
 * maps `code` to an exit status.
 */
export class PlateauError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  /** Every problem found, when the error reports several at once (validation). */
  readonly problems: readonly ConfigProblem[];

  constructor(
    code: ErrorCode,
    message: string,
    options: { hint?: string; cause?: unknown; problems?: readonly ConfigProblem[] } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PlateauError';
    this.code = code;
    this.hint = options.hint;
    this.problems = options.problems ?? [];
  }

  /** The exit status this error ends the process with. */
  get exitCode(): ExitCode {
    return EXIT_CODE_OF[this.code];
  }

  /** Builds the single error that reports every validation problem at once. */
  static invalidConfig(problems: readonly ConfigProblem[], what = 'configuration'): PlateauError {
    const lines = problems.map((p) => `  ${p.setting}: ${p.message} (${p.hint})`);
    const noun = problems.length === 1 ? 'problem' : 'problems';
    return new PlateauError(
      ERROR_CODES.INVALID_CONFIG,
      `invalid ${what}, ${problems.length} ${noun}:\n${lines.join('\n')}`,
      { problems, hint: 'fix the settings named above and run again' },
    );
  }
}

/** Narrows an unknown thrown value to a PlateauError. */
export function isPlateauError(error: unknown): error is PlateauError {
  return error instanceof PlateauError;
}
