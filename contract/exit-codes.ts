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
} as const;

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** Exit codes of a load engine (k6 or plateau's) that still leave a complete run to analyse. */
export const LOAD_FINISHED_CODES: readonly number[] = [
  EXIT_CODES.ok,
  EXIT_CODES.thresholdsFailed,
  EXIT_CODES.interrupted,
];
