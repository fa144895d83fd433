// Every process exit status plateau uses: k6's (errext/exitcodes) where the meaning is k6's.

/** The one table of exit codes, for the CLI, the study and the embedded engine. */
export const EXIT_CODES = {
  ok: 0,
  /** Something failed that has no more specific code (a part plateau started, the database). */
  failure: 1,
  /** Thresholds crossed (k6: 99). */
  thresholdsFailed: 99,
  /** setup() ran past setupTimeout (k6: 100). */
  setupTimeout: 100,
  /** teardown() ran past teardownTimeout (k6: 101). */
  teardownTimeout: 101,
  /** Invalid configuration: bad flags, env, options or files (k6: 104). */
  invalidConfig: 104,
  /** Stopped by SIGINT/SIGTERM; what was gathered is kept (k6: 105). */
  interrupted: 105,
  /** The REST API could not listen on the --address given (k6: 106). */
  restApiFailed: 106,
  /** The script could not load, or threw in init, setup or teardown (k6: 107). */
  scriptException: 107,
  /** exec.test.abort() (k6: 108). */
  testAborted: 108,
  /** exec.test.fail() (k6: 110). */
  testFailed: 110,
  /** The service under test died during a study (plateau's own codes start at 120, clear of k6's 97–110). */
  serviceDied: 120,
  /** The database plateau started for a study (its embedded PostgreSQL) died during it. */
  databaseDied: 121,
  /**
   * The load generator (the engine or k6) died during a study; or, in `plateau engine run
   * --workers`, one of the engine's worker processes died (the others' data are kept).
   */
  generatorDied: 122,
  /** The disk holding the run directory filled during a study. */
  diskFull: 123,
  /**
   * An output of `plateau engine run` (`--out csv=…`, `json=…`) stopped taking the samples:
   * its disk filled, its reader went away, or it fell too far behind. The test stops there;
   * the file keeps what was written.
   */
  outputFailed: 124,
} as const;

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** Exit codes of a load engine (k6 or plateau's) that still leave a complete run to analyse. */
export const LOAD_FINISHED_CODES: readonly number[] = [
  EXIT_CODES.ok,
  EXIT_CODES.thresholdsFailed,
  EXIT_CODES.interrupted,
];

/**
 * Every way a study can end: the `status` its run.json is left with and the exit code of
 * `plateau run` (and `confirm`). docs/capacity-study.md shows this table; a `failed` study
 * exits with its error's own code when it has one (104 for a script that does not build).
 * A metrics source that is lost is not an ending: the study goes on and its record says so.
 */
export const RUN_ENDINGS = {
  /** The load ran to its end. */
  completed: { status: 'completed', exitCode: EXIT_CODES.ok },
  /** SIGINT, SIGTERM or SIGHUP stopped the study. */
  interrupted: { status: 'interrupted', exitCode: EXIT_CODES.interrupted },
  /** The service under test ended on its own (a crash, a kill). */
  'service-died': { status: 'failed', exitCode: EXIT_CODES.serviceDied },
  /** The database plateau started for the service ended on its own. */
  'database-died': { status: 'failed', exitCode: EXIT_CODES.databaseDied },
  /** The engine or k6 ended before its plan did, or failed. */
  'generator-died': { status: 'failed', exitCode: EXIT_CODES.generatorDied },
  /** No space was left where the run directory is. */
  'disk-full': { status: 'failed', exitCode: EXIT_CODES.diskFull },
  /** Anything else: a part that did not start, an error of plateau's own. */
  failed: { status: 'failed', exitCode: EXIT_CODES.failure },
} as const;

/** Why a study ended: a key of {@link RUN_ENDINGS}. */
export type EndingReason = keyof typeof RUN_ENDINGS;
