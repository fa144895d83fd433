// Each script's settings (read from __ENV) and the k6 options they produce. Pure: the
// scripts only add the k6 calls, so everything here is unit-tested in Node.
import type { Options } from 'k6/options';
import { type Env, formatDuration, SettingsReader } from './settings.ts';
import { concurrencyTag, planTags, type RampPlan, RECOVERY_TAG, rampStages, stepTag } from './steps.ts';
import { NOTHING_DROPPED, type Objectives, perStepThresholds, type Threshold } from './thresholds.ts';

/** Where requests go and how long a client waits. */
export interface TargetSettings {
  baseUrl: string;
  /** Path of the endpoint (`ENDPOINT`, not `PATH`, which k6 fills from the system env). */
  endpoint: string;
  /** Account ids cycle through 0 … accounts−1; 0 sends no `account` parameter. */
  accounts: number;
  /** Per-request timeout (the client's deadline), s. */
  timeoutSeconds: number;
  /** The request's method (`METHOD`, default GET). */
  method: string;
  /** Headers every request carries (`HEADERS`, a JSON object of strings). */
  headers: Record<string, string>;
  /** A file whose bytes are every request's body (`BODY_FILE`, read in the init context). */
  bodyFile: string | undefined;
  /**
   * The statuses that count as expected (`EXPECT_STATUS`, e.g. `200,201` or `200-299`);
   * undefined: k6's default, 200–399.
   */
  expectStatus: (number | { min: number; max: number })[] | undefined;
}

/** The methods a study may send. */
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Settings every arrival-rate script shares. */
export interface ArrivalSettings extends TargetSettings {
  preAllocatedVUs: number;
  maxVUs: number;
  objectives: Objectives;
}

export interface CapacitySettings extends ArrivalSettings {
  plan: RampPlan;
  /** Each iteration first sleeps a uniform random 0..jitter s (0 = k6's even spacing). */
  jitterSeconds: number;
}

export interface ConstantRateSettings extends ArrivalSettings {
  ratePerSec: number;
  durationSeconds: number;
}

export interface BreakpointSettings extends ArrivalSettings {
  startRatePerSec: number;
  endRatePerSec: number;
  durationSeconds: number;
  /** Width of the rate buckets that name steps, requests/s. */
  bucketPerSec: number;
}

export interface ConcurrencySettings extends TargetSettings {
  vusLevels: number[];
  holdSeconds: number;
  /** Retries after a failed attempt (503/429 after their Retry-After, else a jittered backoff). */
  retries: number;
  /** Clients after the sweep (tagged `recovery`); 0: the sweep ends at its last level. */
  recoveryVus: number;
  recoverySeconds: number;
}

/** The defaults of every script setting, in one place. */
export const SCRIPT_DEFAULTS = {
  BASE_URL: 'http://127.0.0.1:3366',
  ENDPOINT: '/statement',
  METHOD: 'GET',
  ACCOUNTS: 5000,
  TIMEOUT: 60,
  PREALLOCATED_VUS: 50,
  MAX_VUS: 1500,
  P95_MS: 250,
  FAIL_RATE: 0.01,
  STEPS: [20, 40, 60, 70, 80, 90, 110],
  HOLD: 20,
  RAMP: 2,
  RECOVERY_RATE: 50,
  RECOVERY: 40,
  JITTER: 0,
  RATE: 20,
  DURATION: 30,
  START: 10,
  END: 200,
  BREAKPOINT_DURATION: 120,
  BUCKET: 10,
  VUS_LEVELS: [2, 4, 8, 12, 16, 20],
  CONCURRENCY_HOLD: 20,
  RETRIES: 0,
  RECOVERY_VUS: 0,
  CONCURRENCY_RECOVERY: 20,
} as const;

const D = SCRIPT_DEFAULTS;

function readTarget(r: SettingsReader): TargetSettings {
  const baseUrl = r.string('BASE_URL', D.BASE_URL).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(baseUrl))
    r.problem('BASE_URL', `"${baseUrl}" is not accepted; use http(s)://host:port`);
  const endpoint = r.string('ENDPOINT', D.ENDPOINT);
  if (!endpoint.startsWith('/'))
    r.problem('ENDPOINT', `"${endpoint}" is not accepted; use a path starting with /`);
  const method = r.string('METHOD', D.METHOD).toUpperCase();
  if (!(METHODS as readonly string[]).includes(method)) {
    r.problem('METHOD', `"${method}" is not accepted; use one of ${METHODS.join(', ')}`);
  }
  const bodyFile = r.string('BODY_FILE', '');
  return {
    baseUrl,
    endpoint,
    accounts: r.number('ACCOUNTS', D.ACCOUNTS, { min: 0, max: 1_000_000_000, integer: true }),
    timeoutSeconds: r.seconds('TIMEOUT', D.TIMEOUT, { min: 0.001 }),
    method,
    headers: readHeaders(r),
    bodyFile: bodyFile === '' ? undefined : bodyFile,
    expectStatus: readExpectStatus(r),
  };
}

/** `HEADERS`: a JSON object of header names to string values. */
function readHeaders(r: SettingsReader): Record<string, string> {
  const raw = r.string('HEADERS', '');
  if (raw === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (
    !parsed ||
    typeof parsed !== 'object' ||
    Array.isArray(parsed) ||
    Object.values(parsed).some((v) => typeof v !== 'string')
  ) {
    r.problem(
      'HEADERS',
      `${JSON.stringify(raw)} is not accepted; use a JSON object of strings, e.g. {"Content-Type":"application/json"}`,
    );
    return {};
  }
  return parsed as Record<string, string>;
}

/** `EXPECT_STATUS`: statuses and ranges, `200,201,300-399`. */
export function parseExpectStatus(raw: string): (number | { min: number; max: number })[] | undefined {
  const specs: (number | { min: number; max: number })[] = [];
  for (const part of raw.split(',').map((p) => p.trim())) {
    const range = /^(\d{3})-(\d{3})$/.exec(part);
    if (range) {
      const min = Number(range[1]);
      const max = Number(range[2]);
      if (min > max || min < 100 || max > 599) return undefined;
      specs.push({ min, max });
    } else if (/^\d{3}$/.test(part) && Number(part) >= 100 && Number(part) <= 599) specs.push(Number(part));
    else return undefined;
  }
  return specs.length > 0 ? specs : undefined;
}

function readExpectStatus(r: SettingsReader): (number | { min: number; max: number })[] | undefined {
  const raw = r.string('EXPECT_STATUS', '');
  if (raw === '') return undefined;
  const specs = parseExpectStatus(raw);
  if (!specs)
    r.problem('EXPECT_STATUS', `"${raw}" is not accepted; use statuses and ranges, e.g. 200,201 or 200-299`);
  return specs;
}

function readArrival(r: SettingsReader): ArrivalSettings {
  const target = readTarget(r);
  const preAllocatedVUs = r.number('PREALLOCATED_VUS', D.PREALLOCATED_VUS, { min: 1, integer: true });
  const maxVUs = r.number('MAX_VUS', D.MAX_VUS, { min: 1, integer: true });
  if (maxVUs < preAllocatedVUs) {
    r.problem('MAX_VUS', `${maxVUs} is below PREALLOCATED_VUS ${preAllocatedVUs}; use at least as many`);
  }
  return {
    ...target,
    preAllocatedVUs,
    maxVUs,
    objectives: {
      p95Ms: r.number('P95_MS', D.P95_MS, { min: 0.001 }),
      failRate: r.number('FAIL_RATE', D.FAIL_RATE, { min: 0, max: 1 }),
    },
  };
}

/** Settings of scripts/capacity.ts. Throws SettingsError naming every bad variable. */
export function readCapacitySettings(env: Env): CapacitySettings {
  const r = new SettingsReader(env);
  const arrival = readArrival(r);
  const ratesPerSec = r.stepList('STEPS', D.STEPS, 'whole rates (requests/s)');
  const tagPrefix = r.string('STEP_PREFIX', 'r');
  if (tagPrefix !== 'r' && tagPrefix !== 'p')
    r.problem('STEP_PREFIX', `"${tagPrefix}" is not accepted; use r (a study's steps) or p (the probe's)`);
  const holdSeconds = r.seconds('HOLD', D.HOLD, { min: 1 });
  const rampSeconds = r.seconds('RAMP', D.RAMP, { min: 0 });
  if (holdSeconds <= rampSeconds) {
    r.problem(
      'HOLD',
      `${holdSeconds} s is not longer than RAMP ${rampSeconds} s; each hold must outlast its ramp`,
    );
  }
  const recoverySeconds = r.seconds('RECOVERY', D.RECOVERY, { min: 2 });
  const settings: CapacitySettings = {
    ...arrival,
    plan: {
      ratesPerSec,
      ...(tagPrefix === 'p' ? { tagPrefix: 'p' as const } : {}),
      holdSeconds,
      rampSeconds,
      recoveryRatePerSec: r.number('RECOVERY_RATE', D.RECOVERY_RATE, { min: 0, integer: true }),
      recoverySeconds,
    },
    jitterSeconds: r.seconds('JITTER', D.JITTER, { min: 0 }),
  };
  r.check();
  return settings;
}

/** Settings of scripts/constant-rate.ts. */
export function readConstantRateSettings(env: Env): ConstantRateSettings {
  const r = new SettingsReader(env);
  const settings = {
    ...readArrival(r),
    ratePerSec: r.number('RATE', D.RATE, { min: 1, integer: true }),
    durationSeconds: r.seconds('DURATION', D.DURATION, { min: 1 }),
  };
  r.check();
  return settings;
}

/** Settings of scripts/breakpoint.ts. */
export function readBreakpointSettings(env: Env): BreakpointSettings {
  const r = new SettingsReader(env);
  const startRatePerSec = r.number('START', D.START, { min: 0, integer: true });
  const endRatePerSec = r.number('END', D.END, { min: 1, integer: true });
  if (endRatePerSec <= startRatePerSec)
    r.problem('END', `${endRatePerSec} is not above START ${startRatePerSec}`);
  const settings = {
    ...readArrival(r),
    startRatePerSec,
    endRatePerSec,
    durationSeconds: r.seconds('DURATION', D.BREAKPOINT_DURATION, { min: 1 }),
    bucketPerSec: r.number('BUCKET', D.BUCKET, { min: 0.001 }),
  };
  r.check();
  return settings;
}

/** Settings of scripts/concurrency.ts. */
export function readConcurrencySettings(env: Env): ConcurrencySettings {
  const r = new SettingsReader(env);
  const vusLevels = r.increasingList('VUS_LEVELS', D.VUS_LEVELS, 'VU counts');
  const settings = {
    ...readTarget(r),
    vusLevels,
    holdSeconds: r.seconds('HOLD', D.CONCURRENCY_HOLD, { min: 2 }),
    retries: r.number('RETRIES', D.RETRIES, { min: 0, max: 10, integer: true }),
    recoveryVus: r.number('RECOVERY_VUS', D.RECOVERY_VUS, { min: 0, integer: true }),
    recoverySeconds: r.seconds('RECOVERY', D.CONCURRENCY_RECOVERY, { min: 2 }),
  };
  r.check();
  return settings;
}

/** Summary statistics every script reports. */
const SUMMARY_TREND_STATS = ['med', 'p(95)', 'p(99)', 'max'];

/** k6 options of the stepped capacity ramp. */
export function capacityOptions(s: CapacitySettings): Options {
  return {
    discardResponseBodies: true,
    summaryTrendStats: SUMMARY_TREND_STATS,
    scenarios: {
      capacity: {
        executor: 'ramping-arrival-rate',
        startRate: 0,
        timeUnit: '1s',
        preAllocatedVUs: s.preAllocatedVUs,
        maxVUs: s.maxVUs,
        stages: rampStages(s.plan, formatDuration),
      },
    },
    thresholds: {
      ...NOTHING_DROPPED,
      ...perStepThresholds(planTags(s.plan), s.objectives),
    } as Options['thresholds'],
  };
}

/** The step tag of the constant-rate CI check. */
export const CHECK_TAG = 'check';

/** k6 options of the constant-rate CI check. */
export function constantRateOptions(s: ConstantRateSettings): Options {
  return {
    discardResponseBodies: true,
    summaryTrendStats: SUMMARY_TREND_STATS,
    scenarios: {
      check: {
        executor: 'constant-arrival-rate',
        rate: s.ratePerSec,
        timeUnit: '1s',
        duration: formatDuration(s.durationSeconds),
        preAllocatedVUs: s.preAllocatedVUs,
        maxVUs: s.maxVUs,
      },
    },
    thresholds: {
      ...NOTHING_DROPPED,
      http_req_duration: [`p(95)<${s.objectives.p95Ms}`],
      http_req_failed: [`rate<${s.objectives.failRate}`],
    },
  };
}

/** k6 options of the breakpoint ramp: it aborts soon after the service leaves its objective. */
export function breakpointOptions(s: BreakpointSettings): Options {
  const abort = (threshold: string): Threshold => ({ threshold, abortOnFail: true, delayAbortEval: '10s' });
  return {
    discardResponseBodies: true,
    summaryTrendStats: SUMMARY_TREND_STATS,
    scenarios: {
      breakpoint: {
        executor: 'ramping-arrival-rate',
        startRate: s.startRatePerSec,
        timeUnit: '1s',
        preAllocatedVUs: s.preAllocatedVUs,
        maxVUs: s.maxVUs,
        stages: [{ duration: formatDuration(s.durationSeconds), target: s.endRatePerSec }],
      },
    },
    thresholds: {
      http_req_duration: [abort(`p(95)<${s.objectives.p95Ms}`)],
      http_req_failed: [abort(`rate<${s.objectives.failRate}`)],
    } as Options['thresholds'],
  };
}

/**
 * The step tag of a breakpoint request: the current target rate, rounded to the nearest
 * multiple of the bucket, so `r020` covers 15–25/s with a 10/s bucket.
 */
export function breakpointStepAt(elapsedSeconds: number, s: BreakpointSettings): string {
  const progress = Math.min(1, Math.max(0, elapsedSeconds / s.durationSeconds));
  const rate = s.startRatePerSec + (s.endRatePerSec - s.startRatePerSec) * progress;
  return stepTag(Math.round(rate / s.bucketPerSec) * s.bucketPerSec);
}

/**
 * k6 options of the closed-model sweep: one ramping-vus scenario whose stages jump to each
 * level and hold it. Levels only increase, so no VU is ramped down mid-sweep.
 */
export function concurrencyOptions(s: ConcurrencySettings): Options {
  const stages = s.vusLevels.flatMap((vus) => [
    { duration: '1s', target: vus },
    { duration: formatDuration(s.holdSeconds - 1), target: vus },
  ]);
  // The recovery drops to its clients within a second (the ones removed are interrupted at
  // once: gracefulRampDown 0s) and holds them; ramping-vus ramps linearly within a stage.
  if (s.recoveryVus > 0) {
    stages.push({ duration: '1s', target: s.recoveryVus });
    stages.push({ duration: formatDuration(s.recoverySeconds - 1), target: s.recoveryVus });
  }
  return {
    discardResponseBodies: true,
    summaryTrendStats: SUMMARY_TREND_STATS,
    scenarios: {
      concurrency: {
        executor: 'ramping-vus',
        startVUs: s.vusLevels[0] ?? 1,
        stages,
        gracefulRampDown: '0s',
      },
    },
  };
}

/**
 * The concurrency level current `elapsedSeconds` into the sweep, as its tag (`c008`), or
 * `recovery` once the levels are over and a recovery follows.
 */
export function concurrencyStepAt(elapsedSeconds: number, s: ConcurrencySettings): string {
  const index = Math.floor(Math.max(0, elapsedSeconds) / s.holdSeconds);
  if (index >= s.vusLevels.length && s.recoveryVus > 0) return RECOVERY_TAG;
  return concurrencyTag(s.vusLevels[Math.min(s.vusLevels.length - 1, index)]!);
}

/** Backoff of a retry without Retry-After: full jitter over 50 ms × 2^(attempt−1), at most 1 s. */
const BACKOFF = { baseSeconds: 0.05, capSeconds: 1 } as const;

/**
 * How long to wait before retrying after `attempt` (1 = the first) answered `status`, s;
 * null when it is not worth retrying (a success, or a 4xx other than 429: the same request
 * would fail the same way). A 503 or 429 with a Retry-After of whole seconds waits that long
 * and up to half as long again at random: the service said when it will have room, and
 * clients refused together must not all come back in the same instant. Anything else retryable (a timeout or network
 * error, status 0; 502, 503, 504 without the header) waits a random share of an exponential
 * backoff, so that clients that failed together do not come back together.
 */
export function retryDelaySeconds(
  attempt: number,
  status: number,
  retryAfter: string | undefined,
  random: number,
): number | null {
  const retryable = status === 0 || status === 429 || status === 502 || status === 503 || status === 504;
  if (!retryable) return null;
  if ((status === 503 || status === 429) && retryAfter !== undefined && /^\d{1,4}$/.test(retryAfter.trim()))
    return Number(retryAfter.trim()) * (1 + random / 2);
  return random * Math.min(BACKOFF.capSeconds, BACKOFF.baseSeconds * 2 ** (attempt - 1));
}

/** The URL of one request: endpoint plus the account query parameter (none with ACCOUNTS=0). */
export function requestUrl(t: TargetSettings, account: number): string {
  if (t.accounts === 0) return `${t.baseUrl}${t.endpoint}`;
  const separator = t.endpoint.includes('?') ? '&' : '?';
  return `${t.baseUrl}${t.endpoint}${separator}account=${account}`;
}

/** The account of the `iteration`-th request (0 when the study sends none). */
export function accountOf(t: TargetSettings, iteration: number): number {
  return t.accounts === 0 ? 0 : iteration % t.accounts;
}
