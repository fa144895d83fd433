// Settings of the reference statement API: defaults in one place, read from env, validated.
import { type ConfigProblem, PlateauError } from '../contract/index.ts';
import { describeRange, parseNumberText } from '../lib/number-text.ts';

/** Every setting of the statement service. */
export interface ServiceConfig {
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Address to listen on. */
  host: string;
  /** PostgreSQL URL; undefined = start an embedded PostgreSQL. */
  databaseUrl: string | undefined;
  /** Connections the node-postgres pool may hold. */
  poolMax: number;
  /** Duration of the stand-in query (`SELECT pg_sleep`), ms. */
  queryMs: number;
  /** Size of the rendered statement before gzip, KiB. */
  payloadKb: number;
  /** Render and gzip before borrowing the connection instead of after releasing it. */
  renderFirst: boolean;
  /** Refuse overload with 503 + Retry-After (true) or wait without bound (false). */
  shed: boolean;
  /** With shed on: requests allowed to wait for a connection before new ones are refused. */
  queueMax: number;
  /** With shed on: longest wait for a connection before the request is refused, ms. */
  acquireTimeoutMs: number;
  /** Per-step instrumentation and /metrics; off only to measure what they cost. */
  instrument: boolean;
  /**
   * Honour the client's deadline (the X-Request-Timeout-Ms header): a request whose deadline
   * passed while it waited for a connection is answered 504 without running its query.
   */
  deadlines: boolean;
  /**
   * CPU each request spends on the event loop with its render, ms, besides rendering and
   * gzipping the statement (after the query, or before the borrow with RENDER_FIRST): a
   * second limit in series with the pool (one core's worth).
   */
  cpuMs: number;
  /**
   * An admission gate on event-loop delay: while the loop is late, new requests are refused
   * at the door with 503 + Retry-After (reason `admission`), before any work is done.
   */
  admission: boolean;
  /** What the gate reads: event-loop `delay` (ms) or `utilization` (% of the time busy). */
  admissionSignal: 'delay' | 'utilization';
  /** With the utilisation signal: busy from this % of the time busy. */
  admissionHighPct: number;
  /** With the utilisation signal: normal again at this % (below the high mark). */
  admissionLowPct: number;
  /** The gate enters busy when the event-loop delay reaches this, ms. */
  admissionHighMs: number;
  /** The gate admits again only once the delay falls to this, ms (below the high mark). */
  admissionLowMs: number;
  /** How often the gate reads the event-loop delay, ms. */
  admissionSampleMs: number;
  /**
   * While the database is unreachable, how often the service tries a connection of its own
   * to find out whether it is back, ms (requests are answered 503 at once meanwhile).
   */
  databaseProbeMs: number;
}

/** The defaults, and the single place they are written down. */
export const SERVICE_DEFAULTS: ServiceConfig = {
  port: 3366,
  host: '127.0.0.1',
  databaseUrl: undefined,
  poolMax: 4,
  queryMs: 50,
  payloadKb: 88,
  renderFirst: false,
  shed: true,
  queueMax: 8,
  acquireTimeoutMs: 200,
  instrument: true,
  deadlines: false,
  cpuMs: 0,
  admission: false,
  admissionSignal: 'delay',
  admissionHighPct: 95,
  admissionLowPct: 85,
  admissionHighMs: 40,
  admissionLowMs: 10,
  admissionSampleMs: 250,
  databaseProbeMs: 250,
};

type IntSetting = { key: keyof ServiceConfig; env: string; min: number; max: number; what: string };

const INT_SETTINGS: IntSetting[] = [
  { key: 'port', env: 'PORT', min: 0, max: 65535, what: 'TCP port; 0 picks a free one' },
  { key: 'poolMax', env: 'POOL_MAX', min: 1, max: 1000, what: 'connections the pool may hold' },
  { key: 'queryMs', env: 'QUERY_MS', min: 0, max: 600_000, what: 'the stand-in query, ms' },
  { key: 'payloadKb', env: 'PAYLOAD_KB', min: 1, max: 10_240, what: 'statement before gzip, KiB' },
  { key: 'queueMax', env: 'QUEUE_MAX', min: 0, max: 100_000, what: 'requests allowed to wait' },
  {
    key: 'acquireTimeoutMs',
    env: 'ACQUIRE_TIMEOUT_MS',
    min: 1,
    max: 600_000,
    what: 'longest wait for one, ms',
  },
  {
    key: 'cpuMs',
    env: 'CPU_MS',
    min: 0,
    max: 10_000,
    what: 'CPU per request, ms',
  },
  {
    key: 'admissionHighMs',
    env: 'ADMISSION_HIGH_MS',
    min: 1,
    max: 60_000,
    what: 'gate busy at this delay',
  },
  {
    key: 'admissionLowMs',
    env: 'ADMISSION_LOW_MS',
    min: 0,
    max: 60_000,
    what: 'gate normal at this delay',
  },
  {
    key: 'admissionHighPct',
    env: 'ADMISSION_HIGH_PCT',
    min: 1,
    max: 100,
    what: 'gate busy at this % busy',
  },
  {
    key: 'admissionLowPct',
    env: 'ADMISSION_LOW_PCT',
    min: 0,
    max: 100,
    what: 'gate normal at this %',
  },
  {
    key: 'admissionSampleMs',
    env: 'ADMISSION_SAMPLE_MS',
    min: 10,
    max: 60_000,
    what: 'how often the gate reads',
  },
  {
    key: 'databaseProbeMs',
    env: 'DATABASE_PROBE_MS',
    min: 10,
    max: 60_000,
    what: 'database down: probe every, ms',
  },
];

const BOOL_SETTINGS: { key: keyof ServiceConfig; env: string; what: string }[] = [
  { key: 'renderFirst', env: 'RENDER_FIRST', what: 'render before borrowing' },
  { key: 'shed', env: 'SHED', what: 'off: queue without bound' },
  { key: 'instrument', env: 'INSTRUMENT', what: 'off: no /steps, /metrics' },
  { key: 'deadlines', env: 'DEADLINES', what: 'on: 504 past the deadline' },
  { key: 'admission', env: 'ADMISSION', what: 'on: the admission gate' },
];

/** One line per setting for `plateau serve --help`: name, default, accepted values, meaning. */
export function serviceSettingsHelp(): string {
  const fields = SERVICE_DEFAULTS as unknown as Record<string, unknown>;
  const rows: [string, string, string, string][] = [
    ...INT_SETTINGS.map((s): [string, string, string, string] => [
      s.env,
      String(fields[s.key]),
      `${s.min}-${s.max}`,
      s.what,
    ]),
    ...BOOL_SETTINGS.map((s): [string, string, string, string] => [
      s.env,
      fields[s.key] ? 'on' : 'off',
      'on|off',
      s.what,
    ]),
    ['ADMISSION_SIGNAL', SERVICE_DEFAULTS.admissionSignal, 'word', 'delay or utilization'],
    ['HOST', SERVICE_DEFAULTS.host, 'address', 'address to listen on'],
    ['DATABASE_URL', 'unset', 'postgres://…', 'unset: embedded PostgreSQL'],
  ];
  const width = (i: number) => Math.max(...rows.map((r) => r[i]!.length));
  return rows
    .map((r) => `  ${r[0].padEnd(width(0))}  ${r[1].padEnd(width(1))}  ${r[2].padEnd(width(2))}  ${r[3]}`)
    .join('\n');
}

/** Environment variables the service reads, for `--set KEY=VALUE` validation and help. */
export const SERVICE_ENV_KEYS = [
  ...INT_SETTINGS.map((s) => s.env),
  ...BOOL_SETTINGS.map((s) => s.env),
  'ADMISSION_SIGNAL',
  'HOST',
  'DATABASE_URL',
] as const;

const TRUE_WORDS = new Set(['on', 'true', '1', 'yes']);
const FALSE_WORDS = new Set(['off', 'false', '0', 'no']);

/**
 * Reads the service settings from environment variables over the defaults, then
 * `overrides` (a programmatic config) over both. Returns every problem at once instead
 * of stopping at the first.
 */
export function parseServiceConfig(
  env: Record<string, string | undefined>,
  overrides: Partial<ServiceConfig> = {},
): { config: ServiceConfig; problems: ConfigProblem[] } {
  const config: ServiceConfig = { ...SERVICE_DEFAULTS };
  const problems: ConfigProblem[] = [];
  const fields = config as unknown as Record<string, unknown>;

  for (const s of INT_SETTINGS) {
    const raw = env[s.env];
    if (raw === undefined || raw.trim() === '') continue;
    const limits = { min: s.min, max: s.max, integer: true };
    const value = parseNumberText(raw, limits);
    if (value === undefined) {
      problems.push({
        setting: s.env,
        message: `"${raw}" is not accepted`,
        hint: `use ${describeRange(limits)}`,
      });
      continue;
    }
    fields[s.key] = value;
  }
  for (const s of BOOL_SETTINGS) {
    const raw = env[s.env];
    if (raw === undefined || raw.trim() === '') continue;
    const word = raw.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) fields[s.key] = true;
    else if (FALSE_WORDS.has(word)) fields[s.key] = false;
    else problems.push({ setting: s.env, message: `"${raw}" is not accepted`, hint: 'use on or off' });
  }
  const signal = env.ADMISSION_SIGNAL?.trim().toLowerCase();
  if (signal !== undefined && signal !== '') {
    if (signal === 'delay' || signal === 'utilization') config.admissionSignal = signal;
    else
      problems.push({
        setting: 'ADMISSION_SIGNAL',
        message: `"${env.ADMISSION_SIGNAL}" is not accepted`,
        hint: 'use delay (event-loop delay, ms) or utilization (event-loop utilisation, %)',
      });
  }
  if (env.HOST !== undefined && env.HOST.trim() !== '') config.host = env.HOST.trim();
  if (env.DATABASE_URL !== undefined && env.DATABASE_URL.trim() !== '') {
    const url = env.DATABASE_URL.trim();
    if (!/^postgres(ql)?:\/\//.test(url)) {
      problems.push({
        setting: 'DATABASE_URL',
        message: 'is not a postgres:// or postgresql:// URL',
        hint: 'use postgres://user:password@host:5432/database, or unset it for an embedded PostgreSQL',
      });
    } else {
      config.databaseUrl = url;
    }
  }
  Object.assign(config, stripUndefined(overrides));
  if (config.admissionLowPct >= config.admissionHighPct) {
    problems.push({
      setting: 'ADMISSION_LOW_PCT',
      message: `${config.admissionLowPct} is not below ADMISSION_HIGH_PCT ${config.admissionHighPct}`,
      hint: 'the gate needs a low watermark under the high one (hysteresis), e.g. ADMISSION_HIGH_PCT=95 ADMISSION_LOW_PCT=85',
    });
  }
  if (config.admissionLowMs >= config.admissionHighMs) {
    problems.push({
      setting: 'ADMISSION_LOW_MS',
      message: `${config.admissionLowMs} is not below ADMISSION_HIGH_MS ${config.admissionHighMs}`,
      hint: 'the gate needs a low watermark under the high one (hysteresis), e.g. ADMISSION_HIGH_MS=40 ADMISSION_LOW_MS=10',
    });
  }
  return { config, problems };
}

/** Like {@link parseServiceConfig} but throws one PlateauError listing every problem. */
export function loadServiceConfig(
  env: Record<string, string | undefined>,
  overrides: Partial<ServiceConfig> = {},
): ServiceConfig {
  const { config, problems } = parseServiceConfig(env, overrides);
  if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'service settings');
  return config;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
