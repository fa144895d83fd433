// `plateau run` options → a validated study plan, every value with its source.
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { parseDeclaredResources } from '../../analysis/resources/declared-resources.ts';
import type {
  ConfigProblem,
  SourcedValue,
  StepFinding,
  StudyRequest,
  ValueSource,
  VuSizing,
} from '../../contract/index.ts';
import { PlateauError } from '../../contract/index.ts';
import { parseWorkers } from '../../engine/workers/worker-plan.ts';
import { describeRange, parseNumberText } from '../../lib/number-text.ts';
import { formatDuration, parseSeconds } from '../../scripts/lib/settings.ts';
import { stepSequenceProblem } from '../../scripts/lib/steps.ts';
import { parseServiceConfig, SERVICE_ENV_KEYS } from '../../target-service/config.ts';
import { PROJECT_ROOT } from '../build-scripts.ts';
import { type MeterFlags, type MeterPlan, planMeters } from './meter-plan.ts';
import { planRequest, type RequestFlags } from './request-options.ts';
import { planServiceProcess, type ServiceProcessPlan } from './service-process.ts';
import {
  LAYOUTS,
  MIN_BUDGET_SECONDS,
  MIN_HOLD_SECONDS,
  planProbe,
  recoveryFor,
  STARTUP_ALLOWANCE_SECONDS,
} from './step-placement.ts';

/** The defaults of a study, in one place. */
export const STUDY_DEFAULTS = {
  steps: [20, 40, 60, 70, 80, 90, 110],
  holdSeconds: 20,
  rampSeconds: 2,
  recoveryRatePerSec: 50,
  recoverySeconds: 40,
  jitterSeconds: 0,
  p95Ms: 250,
  failRate: 0.01,
  engine: 'embedded' as 'embedded' | 'k6',
  out: 'runs',
  model: 'open' as 'open' | 'closed',
  /** The open model's client timeout: long, so that a queue shows as latency, not as errors. */
  timeoutSeconds: 60,
  /** The closed model's: a deadline short enough that a queue behind it expires. */
  closedTimeoutSeconds: 1,
  vusLevels: [2, 4, 8, 12, 16, 20],
  retries: 0,
  recoveryVus: 0,
  /** The time a study that finds its own steps may take, probe and study (`--budget`), s. */
  budgetSeconds: 300,
};

/** `--quick`: about 30 s that still crosses the default service's ~70/s ceiling. */
export const QUICK_PROFILE = {
  steps: [20, 40, 60, 80, 100],
  holdSeconds: 5,
  rampSeconds: 1,
  recoverySeconds: 6,
};

/** Reference-service settings `--set` accepts (the ones a study may change). */
export const SETTABLE_KEYS = SERVICE_ENV_KEYS.filter(
  (k) => !['PORT', 'HOST', 'DATABASE_URL', 'INSTRUMENT'].includes(k),
);

/** The raw command-line options of `plateau run` (strings as commander gives them). */
export interface RunFlags extends RequestFlags, Omit<MeterFlags, 'resources'> {
  /** plateau.config's `resources: [...]`, as written (validated by parseDeclaredResources). */
  resources?: unknown;
  script?: string;
  model?: string;
  vus?: string;
  retries?: string;
  recoveryVus?: string;
  timeout?: string;
  steps?: string;
  hold?: string;
  ramp?: string;
  recoveryRate?: string;
  recovery?: string;
  jitter?: string;
  p95Ms?: string;
  failRate?: string;
  set?: string[];
  target?: string;
  engine?: string;
  k6Bin?: string;
  /** `--workers`: the embedded engine's processes, a count or `auto`. */
  workers?: string;
  db?: string;
  out?: string;
  quick?: boolean;
  json?: boolean;
  quiet?: boolean;
  allowRemoteTarget?: boolean;
  /** `--find`: a probe places the steps (the default for your own service given no steps). */
  find?: boolean;
  /** `--budget`: the time probe and study may take, a duration (`5m`, `90s`). */
  budget?: string;
  /** `--repeat-decisive` / `--no-repeat-decisive`: run the decisive steps again later in the study. */
  repeatDecisive?: boolean;
  /**
   * The `service:` block of plateau.config (or of a recorded run, for confirm) as written:
   * the service plateau starts for the study. Not a flag.
   */
  serviceProcess?: unknown;
}

/**
 * A study that probes its service first (harness/study/probe.ts): to place its steps
 * (`--find`), or to choose which of the given steps to repeat (`--repeat-decisive`).
 */
export interface FindPlan {
  /** Whether the probe places the steps (else they were given, and the probe picks the repeats). */
  placeSteps: boolean;
  /** Whether the decisive steps run again later in the study. */
  repeat: boolean;
  /** The time probe and study may take, s (the probe's share only, with given steps). */
  budgetSeconds: number;
  /** The study's settings that were given, kept as given by the placement (else it chooses them). */
  given: {
    holdSeconds?: number;
    rampSeconds?: number;
    recoverySeconds?: number;
    recoveryRatePerSec?: number;
  };
}

/** A study, fully decided. */
export interface StudyPlan {
  /**
   * `capacity` (plateau's stepped ramp), `concurrency` (its closed-model sweep) or the
   * absolute path of your own k6 script.
   */
  script: string;
  /** `open`: stepped arrival rates; `closed`: stepped numbers of clients (`vusLevels`). */
  model: 'open' | 'closed';
  /** The client's deadline, each request's timeout, s. */
  timeoutSeconds: number;
  /** Closed model: clients per level. */
  vusLevels: number[];
  /** Closed model: retries of a failed request. */
  retries: number;
  /** Closed model: clients during the recovery after the levels (0: none). */
  recoveryVus: number;
  /** The steps' rates in run order (a rate run before is a repeat); placeholders until a probe places them. */
  steps: number[];
  holdSeconds: number;
  rampSeconds: number;
  recoveryRatePerSec: number;
  recoverySeconds: number;
  jitterSeconds: number;
  p95Ms: number;
  failRate: number;
  /** The probe that runs before the steps, or null (steps given, no repeats). */
  find: FindPlan | null;
  /**
   * How a probe chose `steps` (run.json's `find`), once it has: kept by a rerun of the same
   * study with more VUs, which runs the same steps without probing again.
   */
  placed?: StepFinding;
  /** Reference-service env (POOL_MAX=…) from --set; empty for a user's own target. */
  service: Record<string, string>;
  /** The user's own service (its origin), or undefined for the reference service. */
  target: string | undefined;
  /** The user's service plateau starts and stops (plateau.config's `service:`), with `--set` applied. */
  serviceProcess?: ServiceProcessPlan;
  /** What each request is (method, endpoint, headers, body, expected statuses). */
  request: StudyRequest;
  engine: 'embedded' | 'k6';
  k6Bin: string;
  /** The embedded engine's worker processes (`--workers`), or undefined to run it in one. */
  workers?: number;
  /** 'embedded' or a postgres URL. */
  db: string;
  out: string;
  json: boolean;
  quiet: boolean;
  /** The service's published meters to read, and PostgreSQL's views. */
  meters: MeterPlan;
  /** Every value with where it came from, for run.json. */
  sources: Record<string, SourcedValue>;
}

const LOOPBACK_NAMES = new Set(['localhost', 'ip6-localhost', 'ip6-loopback']);

/** Whether a URL's host is a loopback address (127.0.0.0/8, ::1, localhost). */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  if (LOOPBACK_NAMES.has(host.toLowerCase())) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/**
 * Validates the flags (and K6_BIN/DATABASE_URL from `env`) into a plan. Every problem is
 * reported at once in one PlateauError, so the CLI exits 104 before anything starts.
 */
export function planStudy(
  flags: RunFlags,
  env: Record<string, string | undefined> = process.env,
  context: { configFile?: string; cores?: number } = {},
): StudyPlan {
  const problems: ConfigProblem[] = [];
  const sources: Record<string, SourcedValue> = {};
  const quick = flags.quick === true;
  const pick = <T extends string | number | boolean>(
    name: string,
    flagValue: T | undefined,
    fallback: T,
    quickValue?: T,
  ): T => {
    let value: T;
    let source: ValueSource;
    if (flagValue !== undefined) [value, source] = [flagValue, 'flag'];
    else if (quick && quickValue !== undefined) [value, source] = [quickValue, 'flag'];
    else [value, source] = [fallback, 'default'];
    sources[name] = {
      value: Array.isArray(value) ? (value as unknown[]).join(',') : value,
      source,
    } as SourcedValue;
    return value;
  };
  const number = (
    flag: string,
    raw: string | undefined,
    fallback: number,
    quickValue: number | undefined,
    min: number,
    integer: boolean,
  ) => {
    if (raw === undefined) return pick(flag, undefined, fallback, quickValue);
    const value = parseNumberText(raw, { min, integer });
    if (value === undefined) {
      problems.push({
        setting: flag,
        message: `"${raw}" is not accepted`,
        hint: `use ${describeRange({ min, integer })}`,
      });
      return fallback;
    }
    return pick(flag, value, fallback);
  };

  let steps = stepList(flags.steps, problems) ?? STUDY_DEFAULTS.steps;
  steps = pick(
    '--steps',
    flags.steps === undefined ? undefined : steps.join(','),
    STUDY_DEFAULTS.steps.join(','),
    QUICK_PROFILE.steps.join(','),
  )
    .split(',')
    .map(Number);
  const holdSeconds = number(
    '--hold',
    flags.hold,
    STUDY_DEFAULTS.holdSeconds,
    QUICK_PROFILE.holdSeconds,
    1,
    false,
  );
  const rampSeconds = number(
    '--ramp',
    flags.ramp,
    STUDY_DEFAULTS.rampSeconds,
    QUICK_PROFILE.rampSeconds,
    0,
    false,
  );
  if (holdSeconds <= rampSeconds) {
    const rampFrom = flags.ramp !== undefined ? '--ramp' : quick ? "--quick's ramp" : `the default ramp`;
    problems.push({
      setting: '--hold',
      message: `${holdSeconds} s is not longer than ${rampFrom}, ${rampSeconds} s`,
      hint: `each hold must outlast its ramp: use --hold above ${rampSeconds}, or a shorter --ramp`,
    });
  }
  const recoveryRatePerSec = number(
    '--recovery-rate',
    flags.recoveryRate,
    STUDY_DEFAULTS.recoveryRatePerSec,
    undefined,
    0,
    true,
  );
  const recoverySeconds = number(
    '--recovery',
    flags.recovery,
    STUDY_DEFAULTS.recoverySeconds,
    QUICK_PROFILE.recoverySeconds,
    2,
    false,
  );
  const jitterSeconds = number('--jitter', flags.jitter, STUDY_DEFAULTS.jitterSeconds, undefined, 0, false);
  const p95Ms = number('--p95-ms', flags.p95Ms, STUDY_DEFAULTS.p95Ms, undefined, 0.001, false);
  const failRate = number('--fail-rate', flags.failRate, STUDY_DEFAULTS.failRate, undefined, 0, false);
  if (failRate > 1)
    problems.push({
      setting: '--fail-rate',
      message: `${failRate} is above 1`,
      hint: 'use a share, e.g. 0.01 for 1 %',
    });

  const model = pick('--model', flags.model as 'open' | 'closed' | undefined, STUDY_DEFAULTS.model);
  oneOf(
    '--model',
    model,
    ['open', 'closed'],
    'a model',
    problems,
    'use open (stepped arrival rates, the default) or closed (stepped numbers of clients, --vus)',
  );
  const closed = model === 'closed';
  // Each model's own flags: given to the other, they would be silently ignored.
  const wrongModel: [string, unknown][] = closed
    ? [
        ['--steps', flags.steps],
        ['--ramp', flags.ramp],
        ['--recovery-rate', flags.recoveryRate],
        ['--jitter', flags.jitter],
        ['--quick', flags.quick],
      ]
    : [
        ['--vus', flags.vus],
        ['--retries', flags.retries],
        ['--recovery-vus', flags.recoveryVus],
      ];
  for (const [flag, value] of wrongModel) {
    if (value === undefined) continue;
    problems.push({
      setting: flag,
      message: `is for the ${closed ? 'open' : 'closed'} model, and this study is ${model}`,
      hint: closed
        ? 'a closed-model sweep takes --vus 2,4,8 (clients per level), --hold, --timeout, --retries, --recovery-vus and --recovery'
        : 'add --model closed for a sweep of client counts, or drop the flag',
    });
  }
  const vusLevels =
    increasingList('--vus', flags.vus, 'whole numbers of clients, e.g. 2,4,8,12,16,20', problems) ??
    STUDY_DEFAULTS.vusLevels;
  if (closed)
    pick(
      '--vus',
      flags.vus === undefined ? undefined : vusLevels.join(','),
      STUDY_DEFAULTS.vusLevels.join(','),
    );
  const retries = closed ? number('--retries', flags.retries, STUDY_DEFAULTS.retries, undefined, 0, true) : 0;
  if (retries > 10)
    problems.push({ setting: '--retries', message: `${retries} is above 10`, hint: 'use 0 to 10' });
  const recoveryVus = closed
    ? number('--recovery-vus', flags.recoveryVus, STUDY_DEFAULTS.recoveryVus, undefined, 0, true)
    : 0;
  const timeoutDefault = closed ? STUDY_DEFAULTS.closedTimeoutSeconds : STUDY_DEFAULTS.timeoutSeconds;
  let timeoutSeconds = timeoutDefault;
  if (flags.timeout !== undefined) {
    const parsed = parseSeconds(flags.timeout);
    if (parsed === undefined || parsed < 0.001) {
      problems.push({
        setting: '--timeout',
        message: `"${flags.timeout}" is not accepted`,
        hint: 'use a duration, e.g. 250ms, 2s or 1m',
      });
    } else timeoutSeconds = parsed;
  }
  pick('--timeout', flags.timeout === undefined ? undefined : timeoutSeconds, timeoutDefault);

  const script = studyScript(pick('--script', flags.script, closed ? 'concurrency' : 'capacity'), problems);

  // The service: --set for the reference service, or --target for the user's own, which
  // plateau starts when the config declares it (then --set changes its env).
  const ownService =
    flags.serviceProcess === undefined
      ? undefined
      : planServiceProcess(flags.serviceProcess, flags.set ?? [], flags.db !== undefined);
  if (ownService) problems.push(...ownService.problems);
  for (const [key, entry] of Object.entries(ownService?.plan?.env ?? {})) {
    // The same object: marking a `set` from the config (markConfigSources) marks both.
    if (entry.source === 'flag') sources[key] = entry;
  }
  const service: Record<string, string> = {};
  for (const entry of ownService ? [] : (flags.set ?? [])) {
    const eq = entry.indexOf('=');
    const key = eq < 0 ? entry : entry.slice(0, eq);
    if (eq < 0 || !SETTABLE_KEYS.includes(key as (typeof SETTABLE_KEYS)[number])) {
      problems.push({
        setting: '--set',
        message: `"${entry}" is not KEY=VALUE with a known key`,
        hint: `keys: ${SETTABLE_KEYS.join(', ')}`,
      });
      continue;
    }
    service[key] = entry.slice(eq + 1);
    sources[key] = { value: service[key]!, source: 'flag' };
  }
  const serviceProblems = parseServiceConfig(service).problems;
  problems.push(...serviceProblems.map((p) => ({ ...p, setting: `--set ${p.setting}` })));
  const target = flags.target;
  if (target !== undefined) {
    sources['--target'] = { value: target, source: 'flag' };
    if (!/^https?:\/\/[^/]+/.test(target)) {
      problems.push({
        setting: '--target',
        message: `"${target}" is not an http(s) URL`,
        hint: 'e.g. --target http://127.0.0.1:8080',
      });
    } else if (!isLoopbackUrl(target) && flags.allowRemoteTarget !== true) {
      problems.push({
        setting: '--target',
        message: `${new URL(target).hostname} is not a loopback address`,
        hint: 'plateau sends load only to 127.0.0.1/::1 unless you pass --allow-remote-target, knowing the host can take it',
      });
    }
    if (Object.keys(service).length > 0) {
      problems.push({
        setting: '--set',
        message: `plateau did not start the service at ${target}, so it cannot change its settings`,
        hint: 'declare it in plateau.config as service: { command, env, ready } for plateau to start it with them, or drop --set',
      });
    }
  } else if (ownService) {
    problems.push({
      setting: 'service',
      message: 'needs the URL to load, which plateau cannot guess from the command',
      hint: 'give --target (or target in the config), e.g. http://127.0.0.1:8080',
    });
  }

  const { request, baseUrl } = planRequest(flags, target, problems, sources);

  const engine = pick('--engine', flags.engine as 'embedded' | 'k6' | undefined, STUDY_DEFAULTS.engine);
  oneOf('--engine', engine, ['embedded', 'k6'], 'an engine', problems, 'use embedded (default) or k6');
  const k6Bin = flags.k6Bin ?? env.K6_BIN ?? 'k6';
  sources['--k6-bin'] = { value: k6Bin, source: flags.k6Bin ? 'flag' : env.K6_BIN ? 'env' : 'default' };
  let db = 'embedded';
  if (flags.db !== undefined) db = flags.db;
  else if (env.DATABASE_URL) db = env.DATABASE_URL;
  sources['--db'] = {
    value: db === 'embedded' ? 'embedded' : '<postgres url>',
    source: flags.db ? 'flag' : env.DATABASE_URL ? 'env' : 'default',
  };
  if (db !== 'embedded' && !/^postgres(ql)?:\/\//.test(db)) {
    problems.push({
      setting: '--db',
      message: 'is neither "embedded" nor a postgres:// URL',
      hint: 'e.g. --db postgres://user:pass@127.0.0.1:5432/app',
    });
  }
  const workers = planWorkers(
    flags.workers,
    engine,
    {
      cores: context.cores ?? availableParallelism(),
      reservedCores: reservedCores(
        target,
        db,
        ownService === undefined ? undefined : { dbGiven: flags.db !== undefined },
      ),
    },
    problems,
    sources,
  );
  const out = pick('--out', flags.out, STUDY_DEFAULTS.out);
  const declared = parseDeclaredResources(flags.resources);
  problems.push(...declared.problems);
  const meters = planMeters({ ...flags, resources: declared.resources }, problems);
  if (meters.metrics.length > 0) sources['--metrics'] = { value: meters.metrics.join(' '), source: 'flag' };
  if (meters.prometheus) {
    sources['--prometheus'] = { value: meters.prometheus.url, source: 'flag' };
    if (meters.prometheus.match)
      sources['--prometheus-match'] = { value: meters.prometheus.match, source: 'flag' };
  }
  const find = planFind(flags, context, closed, problems, sources, {
    hold: flags.hold === undefined ? undefined : holdSeconds,
    ramp: flags.ramp === undefined ? undefined : rampSeconds,
    recovery: flags.recovery === undefined ? undefined : recoverySeconds,
    recoveryRate: flags.recoveryRate === undefined ? undefined : recoveryRatePerSec,
  });
  if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'options');
  return {
    script,
    find,
    model: closed ? 'closed' : 'open',
    timeoutSeconds,
    vusLevels,
    retries,
    recoveryVus,
    steps,
    holdSeconds,
    rampSeconds,
    recoveryRatePerSec,
    recoverySeconds,
    jitterSeconds,
    p95Ms,
    failRate,
    service,
    target: baseUrl,
    ...(ownService?.plan ? { serviceProcess: ownService.plan } : {}),
    request,
    engine: engine as 'embedded' | 'k6',
    k6Bin,
    ...(workers !== undefined ? { workers } : {}),
    db,
    out,
    json: flags.json === true,
    quiet: flags.quiet === true,
    meters,
    sources,
  };
}

/**
 * The cores `--workers auto` leaves to the rest of a run on this machine: one for the service
 * plateau starts (the reference one, `ownService` one of your own, or a target on a loopback
 * address), one for its embedded PostgreSQL (the reference service's, or your service's when
 * it was given `--db embedded`).
 */
export function reservedCores(
  target: string | undefined,
  db: string,
  ownService?: { dbGiven: boolean },
): number {
  const service = target === undefined || ownService !== undefined || isLoopbackUrl(target) ? 1 : 0;
  const database = db === 'embedded' && (target === undefined || ownService?.dbGiven === true) ? 1 : 0;
  return service + database;
}

/**
 * `--workers`: the embedded engine's processes, checked as `plateau engine run` checks them
 * (engine/workers/worker-plan.ts). `auto` leaves a core to each part of the study on this
 * machine: the service plateau starts (or a target on a loopback address) and its embedded
 * PostgreSQL. Real k6 uses every core by itself: with --engine k6 it is a problem.
 */
export function planWorkers(
  text: string | undefined,
  engine: string,
  machine: { cores: number; reservedCores: number },
  problems: ConfigProblem[],
  sources: Record<string, SourcedValue> = {},
): number | undefined {
  if (text === undefined) return undefined;
  if (engine === 'k6') {
    problems.push({
      setting: '--workers',
      message: "splits the embedded engine's load over processes; real k6 uses every core by itself",
      hint: 'leave --workers out with --engine k6',
    });
    return undefined;
  }
  const count = parseWorkers(text, { ...machine, segmented: false, outputToStdout: false }, problems);
  if (count !== undefined) sources['--workers'] = { value: count, source: 'flag' };
  return count;
}

/**
 * Whether the study probes first, and for what: `--find` places the steps, and is the
 * default for a study of your own service (`--target`, `--script`, `--endpoint`, or a config
 * file) given no steps; the reference study keeps its steps, so `npm start` reproduces the
 * published one. `--repeat-decisive` (the default with `--find`) repeats the decisive
 * steps; with given steps the probe then picks which. `--budget` bounds both. Problems:
 * `--find` with `--steps`, `--quick` or the closed model; a budget that holds no probe and
 * study; `--budget` with nothing to probe.
 */
function planFind(
  flags: RunFlags,
  context: { configFile?: string },
  closed: boolean,
  problems: ConfigProblem[],
  sources: Record<string, SourcedValue>,
  given: { hold?: number; ramp?: number; recovery?: number; recoveryRate?: number },
): FindPlan | null {
  const ownService =
    flags.target !== undefined ||
    flags.script !== undefined ||
    flags.endpoint !== undefined ||
    context.configFile !== undefined;
  const byDefault =
    flags.find === undefined && ownService && flags.steps === undefined && !flags.quick && !closed;
  const find = flags.find ?? byDefault;
  if (flags.find !== undefined || byDefault)
    sources['--find'] = { value: find, source: flags.find === undefined ? 'default' : 'flag' };
  if (flags.find === true) {
    const against: [string, unknown, string][] = [
      ['--steps', flags.steps, 'give the steps, or let the probe find them (drop --steps), not both'],
      [
        '--quick',
        flags.quick,
        '--quick runs fixed steps; for a short study that finds its own, use --find --budget 90s',
      ],
      [
        '--model',
        closed ? 'closed' : undefined,
        'the probe raises an arrival rate: --find is for the open model',
      ],
    ];
    for (const [flag, value, hint] of against) {
      if (value === undefined || value === false) continue;
      problems.push({ setting: '--find', message: `cannot be given with ${flag}`, hint });
    }
  }
  const repeat = flags.repeatDecisive ?? find;
  if (flags.repeatDecisive !== undefined) sources['--repeat-decisive'] = { value: repeat, source: 'flag' };
  if (closed && flags.repeatDecisive === true)
    problems.push({
      setting: '--repeat-decisive',
      message: 'is for the open model, and this study is closed',
      hint: 'drop --repeat-decisive, or run the levels again by hand',
    });
  const probes = !closed && (find || repeat);
  let budgetSeconds = STUDY_DEFAULTS.budgetSeconds;
  if (flags.budget !== undefined) {
    const parsed = parseSeconds(flags.budget);
    if (!probes) {
      problems.push({
        setting: '--budget',
        message: 'bounds a study that probes first, and this one does not',
        hint: 'add --find (the probe places the steps) or --repeat-decisive, or drop --budget',
      });
    } else if (parsed === undefined) {
      problems.push({
        setting: '--budget',
        message: `"${flags.budget}" is not accepted`,
        hint: 'use a duration, e.g. 5m, 90s or 2m30s',
      });
    } else if (parsed < MIN_BUDGET_SECONDS) {
      problems.push({
        setting: '--budget',
        message: `${formatDuration(parsed)} is too short for even the probe and the smallest study`,
        hint: `give at least ${formatDuration(MIN_BUDGET_SECONDS)}: a probe to about 64/s and ${LAYOUTS.short.length + 3} steps of ${MIN_HOLD_SECONDS} s take that long`,
      });
    } else budgetSeconds = parsed;
  }
  if (!probes) return null;
  sources['--budget'] = {
    value: formatDuration(budgetSeconds),
    source: flags.budget === undefined ? 'default' : 'flag',
  };
  if (find && given.hold !== undefined) {
    // The smallest study at the given hold, after a probe to ~64/s: what any budget must hold.
    const hold = given.hold;
    const steps = LAYOUTS.short.length + (repeat ? 3 : 0);
    const probe = planProbe(budgetSeconds);
    const needed =
      Math.min(6, probe.ratesPerSec.length) * probe.holdSeconds +
      2 * STARTUP_ALLOWANCE_SECONDS +
      steps * hold +
      (given.recovery ?? recoveryFor(hold));
    if (needed > budgetSeconds)
      problems.push({
        setting: '--budget',
        message: `${formatDuration(budgetSeconds)} does not hold a probe and ${steps} steps of --hold ${hold} s (about ${formatDuration(Math.ceil(needed))})`,
        hint: `give --budget ${formatDuration(Math.ceil(needed / 10) * 10)} or more, or a shorter --hold (or none: the budget then sets it)`,
      });
  }
  return {
    placeSteps: find,
    repeat,
    budgetSeconds,
    given: {
      ...(given.hold !== undefined ? { holdSeconds: given.hold } : {}),
      ...(given.ramp !== undefined ? { rampSeconds: given.ramp } : {}),
      ...(given.recovery !== undefined ? { recoverySeconds: given.recovery } : {}),
      ...(given.recoveryRate !== undefined ? { recoveryRatePerSec: given.recoveryRate } : {}),
    },
  };
}

/**
 * `--steps`: positive whole rates in run order, each above every rate before it or a repeat
 * of one already run (`20,40,60,40`); undefined when not given or not such (a problem then).
 */
function stepList(raw: string | undefined, problems: ConfigProblem[]): number[] | undefined {
  if (raw === undefined) return undefined;
  const parts = raw.split(',').map((p) => p.trim());
  const values = parts.map(Number);
  const wellFormed = parts.every((p) => /^\d+$/.test(p)) && values.every((v) => v > 0);
  const why = wellFormed ? stepSequenceProblem(values) : undefined;
  if (wellFormed && why === undefined) return values;
  problems.push({
    setting: '--steps',
    message: `"${raw}" is not accepted${why ? `: ${why}` : ''}`,
    hint: 'use increasing whole rates, e.g. 20,40,60; a lower rate after them repeats an earlier step (20,40,60,40)',
  });
  return undefined;
}

/** Adds a problem when `value` of `flag` is not one of `allowed` (`what`: "a model"). */
function oneOf(
  flag: string,
  value: string,
  allowed: readonly string[],
  what: string,
  problems: ConfigProblem[],
  hint: string,
): void {
  if (!allowed.includes(value)) problems.push({ setting: flag, message: `"${value}" is not ${what}`, hint });
}

/**
 * A flag of strictly increasing positive whole numbers (`20,40,60`); undefined when it was not
 * given or is not one (then a problem naming `what` is added).
 */
function increasingList(
  flag: string,
  raw: string | undefined,
  what: string,
  problems: ConfigProblem[],
): number[] | undefined {
  if (raw === undefined) return undefined;
  const parts = raw.split(',').map((p) => p.trim());
  const values = parts.map(Number);
  const ok =
    parts.every((p) => /^\d+$/.test(p)) &&
    values.every((v) => v > 0) &&
    values.every((v, i) => i === 0 || v > values[i - 1]!);
  if (ok) return values;
  problems.push({
    setting: flag,
    message: `"${raw}" is not accepted`,
    hint: `use strictly increasing ${what}`,
  });
  return undefined;
}

/**
 * `--script`: `capacity` (plateau's own), or a k6 script of yours (.ts or .js), which
 * plateau bundles (`plateau/k6` gives it the study's options and step tags).
 */
export function studyScript(given: string, problems: ConfigProblem[]): string {
  if (given === 'capacity' || given === 'concurrency') return given;
  const path = resolve(given);
  if (!/\.(m?js|ts)$/.test(path)) {
    problems.push({
      setting: '--script',
      message: `${given} is not a .ts or .js file`,
      hint: 'give a k6 script, e.g. --script tests/orders.ts',
    });
  } else if (!existsSync(path)) {
    problems.push({
      setting: '--script',
      message: `${path} does not exist`,
      hint: 'give the path of your k6 script',
    });
  }
  return path;
}

/** The entry file of a plan's script. */
export function scriptEntry(script: string, name = 'capacity'): string {
  if (script === 'concurrency') return join(PROJECT_ROOT, 'scripts', 'concurrency.ts');
  return script === name ? join(PROJECT_ROOT, 'scripts', `${name}.ts`) : script;
}

/** The capacity script's -e settings for a plan, with the VUs the study sized. */
export function scriptEnv(plan: StudyPlan, baseUrl: string, vus: VuSizing): Record<string, string> {
  if (plan.model === 'closed') {
    return {
      BASE_URL: baseUrl,
      VUS_LEVELS: plan.vusLevels.join(','),
      HOLD: String(plan.holdSeconds),
      TIMEOUT: formatDuration(plan.timeoutSeconds),
      RETRIES: String(plan.retries),
      RECOVERY_VUS: String(plan.recoveryVus),
      RECOVERY: String(plan.recoverySeconds),
    };
  }
  return {
    TIMEOUT: formatDuration(plan.timeoutSeconds),
    BASE_URL: baseUrl,
    STEPS: plan.steps.join(','),
    HOLD: String(plan.holdSeconds),
    RAMP: String(plan.rampSeconds),
    RECOVERY_RATE: String(plan.recoveryRatePerSec),
    RECOVERY: String(plan.recoverySeconds),
    JITTER: String(plan.jitterSeconds),
    P95_MS: String(plan.p95Ms),
    FAIL_RATE: String(plan.failRate),
    PREALLOCATED_VUS: String(vus.preAllocatedVUs),
    MAX_VUS: String(vus.maxVUs),
  };
}
