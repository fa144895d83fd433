// run.json: everything about how a run was made, each value with where it came from.
import type { DatabaseInfo } from './database.ts';
import type { EndingReason } from './exit-codes.ts';
import type { StepFinding } from './probe.ts';
import type { DeclaredResource, MeterSourceStatus, ResourceKind, ResourceRole } from './resources.ts';

/** Where a configuration value came from. */
export type ValueSource = 'default' | 'env' | 'flag' | 'config' | 'manifest' | 'script';

/** One configuration value and its source. */
export interface SourcedValue<T = string | number | boolean> {
  value: T;
  source: ValueSource;
}

/** The VUs a study gave the generator, and why that many. */
export interface VuSizing {
  preAllocatedVUs: number;
  maxVUs: number;
  /** How the numbers were reached, in words. */
  basis: string;
}

/** The load a run applied (the capacity script's plan). */
export interface LoadPlan {
  script: string;
  /**
   * Target rate of each step in run order, requests/s. A rate run before is a repeat of that
   * step (tagged `r070b`); runs before repeats existed only climb. While the probe of
   * `plateau run --find` runs, the probe's rates (tagged `p016`).
   */
  stepsPerSec: number[];
  holdSeconds: number;
  rampSeconds: number;
  recoveryRatePerSec: number;
  recoverySeconds: number;
  jitterSeconds: number;
  /** Service objectives the thresholds used. */
  p95Ms: number;
  failRate: number;
  /** The VUs given to the generator (absent in runs before schema 2). */
  vus?: VuSizing;
  /**
   * `open` (absent in older runs): arrivals at stepped rates. `closed`: a fixed number of
   * clients per level, each sending its next request when the last one ended.
   */
  model?: 'open' | 'closed';
  /** The client's deadline: each request's timeout, s (absent in older runs: 60). */
  timeoutSeconds?: number;
  /** The closed model's client levels, in order (each held holdSeconds). */
  vusLevels?: number[];
  /** The closed model's retries per request (0: none). */
  retries?: number;
  /** The closed model's clients after the levels, for recoverySeconds (0: no recovery). */
  recoveryVus?: number;
}

/**
 * A service of the user's that plateau started, stopped and logged (`service.log`), as it
 * ran: enough for `plateau confirm` to start it again with one env setting changed.
 */
export interface ServiceProcessRecord {
  /** The program, then its arguments: run through no shell. */
  command: string[];
  /** Its working directory, absolute. */
  cwd: string;
  /**
   * Each env setting it was given over plateau's own environment, with its source (`config`,
   * `flag` for `--set`, `manifest` in a confirm). A DATABASE_URL plateau passed is not here.
   */
  env: Record<string, SourcedValue<string>>;
  /** When it counted as ready: a line of its stdout/stderr matching `log`, or `url` answering 2xx. */
  ready: { log: string; timeoutSeconds: number } | { url: string; timeoutSeconds: number };
  /** How it was stopped: `signal`, then SIGKILL after `graceSeconds`. */
  stop: { signal: string; graceSeconds: number };
}

/** The request a study sends (`--endpoint`, `--method`, `--body`, `--header`, `--expect-status`). */
export interface StudyRequest {
  method: string;
  /** The path on the target; null: the reference service's `/statement?account=N`. */
  endpoint: string | null;
  headers: Record<string, string>;
  /** The body: a file (`--body @file`), or text given on the command line. */
  body?: { file: string } | { text: string };
  /** The expected statuses (`200,201`, `200-299`); null: k6's default, 200–399. */
  expectStatus: string | null;
}

/**
 * How a run ended, written once when it ends (contract/exit-codes.ts `RUN_ENDINGS` gives the
 * status and exit code of each reason).
 */
export interface RunEnding {
  reason: EndingReason;
  /** What happened, in words: `the statement service died (killed by SIGKILL)`. */
  detail: string;
  /** The step the load was in when the run ended; null when it ended before the load began. */
  atStep: string | null;
}

/** The `run.json` of a run directory. */
export interface RunManifest {
  kind: 'plateau.run';
  /** 2 added `load.vus`, `rerunOf` and `rerunAs`; 1 is still read. */
  schemaVersion: 1 | 2;
  id: string;
  status: 'running' | 'completed' | 'interrupted' | 'failed';
  startedAt: string;
  endedAt: string | null;
  /** Every configuration value with its source (`POOL_MAX`, `STEPS`, `engine`, …). */
  config: Record<string, SourcedValue>;
  load: LoadPlan;
  /** Reference-service settings (POOL_MAX, QUERY_MS, …) or null for a user's own target. */
  service: Record<string, string | number | boolean> | null;
  /**
   * The user's service that plateau started for the run (plateau.config's `service:`);
   * absent when plateau started none (the reference service, or a target it was only given).
   */
  serviceProcess?: ServiceProcessRecord;
  target: string;
  /** The load engine; `workers`: the embedded engine's processes (`--workers`), absent for one. */
  engine: { name: 'embedded' | 'k6'; version: string; workers?: number };
  database: DatabaseInfo | null;
  versions: { node: string; plateau: string; gitCommit: string | null };
  machine: { cpus: number; memoryMb: number; platform: string };
  /**
   * The step the load is in, rewritten as each step begins (so a run whose plateau process
   * itself was killed still says how far it got); at the end, the step it ended in.
   */
  reachedStep: string | null;
  /**
   * Why and where the run ended; absent while it runs, and in runs written before it was
   * recorded (their `status` and last warning say what is known).
   */
  ended?: RunEnding;
  exitCode: number | null;
  warnings: string[];
  /** The run this one repeats with more VUs because that one dropped starts. */
  rerunOf?: string | null;
  /** The run that repeated this one with more VUs. */
  rerunAs?: string | null;
  /** The request the study sent; absent in runs made before it could be chosen (GET /statement). */
  request?: StudyRequest;
  /**
   * How the steps were chosen when a probe chose them (`plateau run --find`, or repeats of
   * given steps); absent for steps given by hand alone, and in runs made before.
   */
  find?: StepFinding;
  /**
   * The service's published meters: the sources read (`--metrics`, `--prometheus`,
   * PostgreSQL's views) and how each fared, and the resources declared in plateau.config.
   * Absent in runs made before they were read.
   */
  meters?: {
    sources: MeterSourceStatus[];
    declared: DeclaredResource[];
    /** The resources the analysis recognised in them (resources.json has their seconds). */
    resources?: { name: string; kind: ResourceKind; role: ResourceRole; family: string; source: string }[];
  };
}
