// Consolidates the script's `options` with command-line overrides and validates them.
import { type ConfigProblem, PlateauError } from '../../contract/index.ts';
import { PLATEAU_VERSION } from '../../lib/version.ts';
import { parseScenario, type ScenarioConfig } from '../executor/registry.ts';
import type { TlsSettings } from '../js/modules/connection-pool.ts';
import { DEFAULT_SYSTEM_TAGS, isSystemTag, type SystemTag, UNRECORDED_TAGS } from '../metrics/system-tags.ts';
import type { ThresholdConfig } from '../metrics/thresholds.ts';
import { parseCidr } from './cidr.ts';
import { ConfigReader } from './config-reader.ts';
import { readBaseScenario } from './scenarios.ts';

/** k6's default summary trend statistics. */
export const DEFAULT_SUMMARY_TREND_STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)'];

const TREND_STAT = /^(avg|min|med|max|count|p\((\d+(\.\d+)?)\))$/;
const SECOND_NS = 1e9;
/** The engine's User-Agent unless options.userAgent says otherwise. */
export const DEFAULT_USER_AGENT = `plateau/${PLATEAU_VERSION} (k6 compatible)`;

/** Everything a run needs from options, after defaults, script and flags. */
export interface TestOptions {
  scenarios: ScenarioConfig[];
  thresholds: Record<string, ThresholdConfig | ThresholdConfig[]>;
  summaryTrendStats: string[];
  discardResponseBodies: boolean;
  /** Redirects a request follows unless its params say otherwise (k6's default: 10). */
  maxRedirects: number;
  /** Keep each VU's cookies from one iteration to the next (k6 empties the jar by default). */
  noCookiesReset: boolean;
  /** A new connection for every request (k6's noConnectionReuse: Connection: close). */
  noConnectionReuse: boolean;
  /** A VU's connections are closed when its iteration ends (k6's noVUConnectionReuse). */
  noVUConnectionReuse: boolean;
  /** Accept any server certificate (self-signed test environments). */
  insecureSkipTLSVerify: boolean;
  /** k6's `throw`: a request that fails (network, timeout, TLS, decompression) rejects instead of warning. */
  throw: boolean;
  /** k6's httpDebug (--http-debug[=full]): log each request and response, with bodies when 'full'. */
  httpDebug: '' | 'headers' | 'full';
  /** k6's noSetup / noTeardown (--no-setup, --no-teardown): skip setup() / teardown(). */
  noSetup: boolean;
  noTeardown: boolean;
  /** The User-Agent of requests that set none ('' sends none). */
  userAgent: string;
  /** k6's `hosts`: `name` → `ip` or `name:port` → `ip:port`, dialled instead of DNS. */
  hosts: Record<string, string>;
  /** k6's tlsVersion and tlsAuth. */
  tls: TlsSettings;
  /** options.tags plus --tag. */
  tags: Record<string, string>;
  setupTimeoutNs: number;
  teardownTimeoutNs: number;
  executionSegment: string | undefined;
  executionSegmentSequence: string | undefined;
  /**
   * k6's minIterationDuration: a full iteration shorter than this keeps its VU busy for the
   * rest, after its samples (iteration_duration leaves the wait out, as in k6). 0 = none.
   */
  minIterationDurationMs: number;
  /** k6's rps: requests per second for the whole test (each waits its turn); 0 = no limit. */
  rps: number;
  /** k6's blockHostnames: names (`*.` wildcards first) requests may not be sent to (error 1111). */
  blockHostnames: string[];
  /** k6's blacklistIPs: CIDR ranges requests may not connect to (error 1110). */
  blacklistIPs: string[];
  /** k6's summaryTimeUnit: '' lets each value pick its unit, else s, ms or us for all. */
  summaryTimeUnit: '' | 's' | 'ms' | 'us';
  /** k6's handleSummaryTimeout (default 2 min). */
  handleSummaryTimeoutNs: number;
  /** k6's systemTags: the system tags samples carry (`vu` and `iter` as metadata). */
  systemTags: SystemTag[];
  /**
   * Options the script (or a flag) set that the engine does not apply, each said with why,
   * and names k6 does not know: the runner logs them before anything runs, as silence
   * would mislead.
   */
  warnings: string[];
  /** The script's options object, for `exec.test.options`. */
  scriptOptions: Record<string, unknown>;
}

/** Every option name k6 reads from a script's `options` (lib/options.go and the CLI's own). */
const K6_OPTION_NAMES = new Set([
  'batch',
  'batchPerHost',
  'blacklistIPs',
  'blockHostnames',
  'cloud',
  'consoleOutput',
  'discardResponseBodies',
  'dns',
  'duration',
  'executionSegment',
  'executionSegmentSequence',
  'ext',
  'handleSummaryTimeout',
  'hosts',
  'httpDebug',
  'insecureSkipTLSVerify',
  'iterations',
  'linger',
  'localIPs',
  'maxRedirects',
  'metricSamplesBufferSize',
  'minIterationDuration',
  'noColor',
  'noConnectionReuse',
  'noCookiesReset',
  'noSetup',
  'noTeardown',
  'noUsageReport',
  'noVUConnectionReuse',
  'paused',
  'rps',
  'scenarios',
  'setupTimeout',
  'stages',
  'summaryTimeUnit',
  'summaryTrendStats',
  'systemTags',
  'tags',
  'teardownTimeout',
  'thresholds',
  'throw',
  'tlsAIAFetch',
  'tlsAuth',
  'tlsCipherSuites',
  'tlsVersion',
  'userAgent',
  'vus',
  'vusMax',
]);

/**
 * k6 options the engine reads but does not apply, and what happens instead. Options that
 * only concern k6's cloud, usage reports or terminal colours (cloud, ext, noUsageReport,
 * noColor) change nothing in a local run and pass silently.
 */
const NOT_APPLIED: Readonly<Record<string, string>> = {
  batch: 'only http.batch() reads it, and the engine has no http.batch()',
  batchPerHost: 'only http.batch() reads it, and the engine has no http.batch()',
  dns: "names are resolved by the system resolver at each dial; k6's DNS cache settings do not apply",
  localIPs: "requests leave from the system's default source address",
  tlsCipherSuites: "Node's OpenSSL defaults choose the cipher suites",
  tlsAIAFetch: 'missing intermediate certificates are not fetched',
  linger: 'the engine has no REST API to linger for: it exits when the test ends',
  paused: 'the engine has no REST API to resume a paused test from: it starts at once',
  metricSamplesBufferSize: 'the engine buffers samples its own way (flushed every 100 ms)',
  vusMax: 'k6 no longer reads it either: VUs come from the scenarios',
  consoleOutput: 'set it with --console-output FILE',
};

const SUMMARY_TIME_UNITS = ['s', 'ms', 'us'] as const;

/** What the command line may override (k6 flags of the same meaning). */
export interface OptionOverrides {
  summaryTrendStats?: string[];
  tags?: Record<string, string>;
  noThresholds?: boolean;
  insecureSkipTLSVerify?: boolean;
  throw?: boolean;
  /**
   * k6's shortcut flags (--vus, --duration, --iterations, --stage). As in k6, the command
   * line outranks the script: a duration, iteration count or stages given here replace the
   * script's scenarios with the one `default` scenario they describe.
   */
  shortcuts?: {
    vus?: number;
    duration?: string;
    iterations?: number;
    stages?: { duration: string; target: number }[];
  };
  /**
   * Script options set from the command line (k6's --user-agent, --max-redirects,
   * --no-connection-reuse, …): they replace the script's values of the same name and are
   * validated as if the script had set them.
   */
  options?: Record<string, unknown>;
  /** Options from k6's --config file: below the script's own, as k6 ranks them. */
  configFile?: Record<string, unknown>;
  executionSegment?: string;
  executionSegmentSequence?: string;
}

/**
 * Defaults, then the script's `options`, then `overrides`. Every problem is reported at
 * once in one PlateauError (the CLI exits 104, k6's invalid-config code).
 */
export function consolidateOptions(scriptOptions: unknown, overrides: OptionOverrides = {}): TestOptions {
  const fromScript = (scriptOptions ?? {}) as Record<string, unknown>;
  if (typeof fromScript !== 'object' || Array.isArray(fromScript)) {
    throw PlateauError.invalidConfig([
      { setting: 'options', message: 'is not an object', hint: 'export const options = { … }' },
    ]);
  }
  const raw: Record<string, unknown> = {
    ...(overrides.configFile ?? {}),
    ...fromScript,
    ...(overrides.options ?? {}),
  };
  const read = new ConfigReader();
  const problems = read.problems;
  const scenarios = readScenarios(scenariosOf(raw, overrides.shortcuts ?? {}), read);
  const summaryTrendStats =
    overrides.summaryTrendStats ??
    (raw.summaryTrendStats as string[] | undefined) ??
    DEFAULT_SUMMARY_TREND_STATS;
  checkTrendStats(summaryTrendStats, read);
  const thresholds = overrides.noThresholds ? {} : ((raw.thresholds ?? {}) as TestOptions['thresholds']);
  if (typeof thresholds !== 'object' || Array.isArray(thresholds)) {
    read.problem(
      'options.thresholds',
      'is not an object',
      "map metric names to expressions, e.g. { http_req_failed: ['rate<0.01'] }",
    );
  }
  const warnings = unappliedOptionWarnings(raw);
  const summaryTimeUnit = raw.summaryTimeUnit ?? '';
  if (summaryTimeUnit !== '' && !SUMMARY_TIME_UNITS.includes(summaryTimeUnit as 's')) {
    read.problem(
      'options.summaryTimeUnit',
      `${JSON.stringify(summaryTimeUnit)} is not a time unit the summary uses`,
      `use ${SUMMARY_TIME_UNITS.join(', ')}, or leave it unset for a unit per value`,
    );
  }
  const options: TestOptions = {
    scenarios,
    thresholds,
    summaryTrendStats,
    ...httpOptions(raw, overrides, read),
    noSetup: raw.noSetup === true,
    noTeardown: raw.noTeardown === true,
    tags: { ...read.stringMap(raw.tags, 'options.tags'), ...(overrides.tags ?? {}) },
    setupTimeoutNs: read.duration(raw.setupTimeout, 'options.setupTimeout', 60 * SECOND_NS),
    teardownTimeoutNs: read.duration(raw.teardownTimeout, 'options.teardownTimeout', 60 * SECOND_NS),
    executionSegment: overrides.executionSegment ?? (raw.executionSegment as string | undefined),
    executionSegmentSequence:
      overrides.executionSegmentSequence ?? (raw.executionSegmentSequence as string | undefined),
    minIterationDurationMs: read.duration(raw.minIterationDuration, 'options.minIterationDuration', 0) / 1e6,
    rps: read.integer(raw.rps, 'options.rps', 0, 0),
    summaryTimeUnit: SUMMARY_TIME_UNITS.includes(summaryTimeUnit as 's')
      ? (summaryTimeUnit as TestOptions['summaryTimeUnit'])
      : '',
    handleSummaryTimeoutNs: read.duration(
      raw.handleSummaryTimeout,
      'options.handleSummaryTimeout',
      120 * SECOND_NS,
    ),
    systemTags: systemTags(raw.systemTags, problems, warnings),
    warnings,
    scriptOptions: raw,
  };
  if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'test options');
  return options;
}

/**
 * The raw scenarios: the script's, or the one `default` scenario k6's shortcut options
 * describe. As in k6, the command line's shortcuts outrank the script: a duration,
 * iteration count or stages given there replace the script's scenarios.
 */
function scenariosOf(raw: Record<string, unknown>, cli: NonNullable<OptionOverrides['shortcuts']>): unknown {
  const cliScenario = cli.duration !== undefined || cli.iterations !== undefined || cli.stages !== undefined;
  const shortcuts = { ...raw, ...cli };
  if (!cliScenario) return raw.scenarios ?? shortcutScenario(shortcuts);
  // The command line's shortcuts stand alone: none of the script's own shortcut values mix in.
  for (const key of ['duration', 'iterations', 'stages'] as const) {
    if (cli[key] === undefined) delete shortcuts[key];
  }
  return shortcutScenario(shortcuts);
}

/** Each scenario read by its executor (engine/executor/registry.ts). */
function readScenarios(scenariosRaw: unknown, read: ConfigReader): ScenarioConfig[] {
  if (typeof scenariosRaw !== 'object' || scenariosRaw === null || Array.isArray(scenariosRaw)) {
    read.problem('options.scenarios', 'is not an object', 'map scenario names to configs');
    return [];
  }
  const scenarios: ScenarioConfig[] = [];
  for (const [name, value] of Object.entries(scenariosRaw as Record<string, unknown>)) {
    const fields = read.scenario(name, (value ?? {}) as Record<string, unknown>);
    const scenario = parseScenario(readBaseScenario(fields), fields);
    if (scenario) scenarios.push(scenario);
  }
  if (scenarios.length === 0 && read.problems.length === 0) {
    read.problem('options.scenarios', 'is empty', 'define at least one scenario');
  }
  return scenarios;
}

function checkTrendStats(stats: readonly string[], read: ConfigReader): void {
  for (const stat of stats) {
    const match = TREND_STAT.exec(stat);
    if (!match || (match[2] !== undefined && Number(match[2]) > 100)) {
      read.problem(
        'summaryTrendStats',
        `"${stat}" is not a trend statistic`,
        'use avg, min, med, max, count or p(N) with 0 <= N <= 100',
      );
    }
  }
}

/** Options the engine reads but does not apply, and names k6 does not know, each with why. */
function unappliedOptionWarnings(raw: Record<string, unknown>): string[] {
  const warnings: string[] = [];
  for (const name of Object.keys(raw)) {
    if (raw[name] === undefined || raw[name] === null) continue;
    const why = NOT_APPLIED[name];
    if (why) warnings.push(`options.${name} is not applied by the embedded engine: ${why}`);
    else if (!K6_OPTION_NAMES.has(name)) {
      warnings.push(`options.${name} is not a k6 option and is ignored: check its spelling`);
    }
  }
  return warnings;
}

/** The options that change how requests are made and where they may go. */
export type HttpOptions = Pick<
  TestOptions,
  | 'discardResponseBodies'
  | 'maxRedirects'
  | 'noCookiesReset'
  | 'noConnectionReuse'
  | 'noVUConnectionReuse'
  | 'insecureSkipTLSVerify'
  | 'throw'
  | 'httpDebug'
  | 'userAgent'
  | 'hosts'
  | 'tls'
  | 'blockHostnames'
  | 'blacklistIPs'
>;

/** The options that change how requests are made and where they may go. */
function httpOptions(
  raw: Record<string, unknown>,
  overrides: OptionOverrides,
  read: ConfigReader,
): HttpOptions {
  const problems = read.problems;
  const maxRedirects = raw.maxRedirects ?? 10;
  if (typeof maxRedirects !== 'number' || !Number.isInteger(maxRedirects) || maxRedirects < 0) {
    read.problem(
      'options.maxRedirects',
      `${JSON.stringify(maxRedirects)} is not a whole number of redirects`,
      'use 0 (follow none) or more; k6 follows 10 by default',
    );
  }
  // k6 sends k6/<version> (https://k6.io/); the engine says what it is.
  const userAgent = raw.userAgent ?? DEFAULT_USER_AGENT;
  if (typeof userAgent !== 'string') {
    read.problem(
      'options.userAgent',
      `${JSON.stringify(userAgent)} is not a string`,
      "use a string, or '' to send no User-Agent",
    );
  }
  return {
    discardResponseBodies: raw.discardResponseBodies === true,
    maxRedirects: Number(maxRedirects),
    noCookiesReset: raw.noCookiesReset === true,
    noConnectionReuse: raw.noConnectionReuse === true,
    noVUConnectionReuse: raw.noVUConnectionReuse === true,
    insecureSkipTLSVerify: overrides.insecureSkipTLSVerify ?? raw.insecureSkipTLSVerify === true,
    throw: overrides.throw ?? raw.throw === true,
    httpDebug:
      raw.httpDebug === 'full'
        ? 'full'
        : raw.httpDebug === true || raw.httpDebug === 'headers'
          ? 'headers'
          : '',
    userAgent: String(userAgent),
    hosts: read.stringMap(raw.hosts, 'options.hosts'),
    tls: tlsSettings(raw, problems),
    blockHostnames: hostnamePatterns(raw.blockHostnames, problems),
    blacklistIPs: ipRanges(raw.blacklistIPs, problems),
  };
}

/** k6's TLS version names → Node's. */
const TLS_VERSIONS: Record<string, TlsSettings['minVersion']> = {
  'tls1.0': 'TLSv1',
  'tls1.1': 'TLSv1.1',
  'tls1.2': 'TLSv1.2',
  'tls1.3': 'TLSv1.3',
};

/** `tlsVersion` (a version, or `{ min, max }`) and `tlsAuth` (client certificates), checked. */
function tlsSettings(raw: Record<string, unknown>, problems: ConfigProblem[]): TlsSettings {
  const settings: TlsSettings = { auth: [] };
  const version = (value: unknown, setting: string) => {
    const node = TLS_VERSIONS[String(value)];
    if (!node) {
      problems.push({
        setting,
        message: `${JSON.stringify(value)} is not a TLS version the engine speaks`,
        hint: `use one of ${Object.keys(TLS_VERSIONS).join(', ')}`,
      });
    }
    return node;
  };
  const tlsVersion = raw.tlsVersion;
  if (typeof tlsVersion === 'string') {
    const only = version(tlsVersion, 'options.tlsVersion');
    if (only) Object.assign(settings, { minVersion: only, maxVersion: only });
  } else if (tlsVersion !== undefined && tlsVersion !== null) {
    const { min, max } = tlsVersion as { min?: unknown; max?: unknown };
    const minVersion = min === undefined ? undefined : version(min, 'options.tlsVersion.min');
    const maxVersion = max === undefined ? undefined : version(max, 'options.tlsVersion.max');
    if (minVersion) settings.minVersion = minVersion;
    if (maxVersion) settings.maxVersion = maxVersion;
  }
  const auth = raw.tlsAuth;
  if (auth === undefined || auth === null) return settings;
  if (!Array.isArray(auth)) {
    problems.push({
      setting: 'options.tlsAuth',
      message: 'is not a list',
      hint: "use [{ domains: ['example.com'], cert: open('./cert.pem'), key: open('./key.pem') }]",
    });
    return settings;
  }
  const entries: TlsSettings['auth'][number][] = [];
  auth.forEach((entry: { domains?: unknown; cert?: unknown; key?: unknown; password?: unknown }, i) => {
    if (typeof entry?.cert !== 'string' || typeof entry?.key !== 'string') {
      problems.push({
        setting: `options.tlsAuth[${i}]`,
        message: 'needs cert and key, each the PEM text',
        hint: "read them in the init context: cert: open('./client.pem'), key: open('./client-key.pem')",
      });
      return;
    }
    const domains = Array.isArray(entry.domains) ? entry.domains.map(String) : [];
    entries.push({
      domains,
      cert: entry.cert,
      key: entry.key,
      ...(typeof entry.password === 'string' ? { passphrase: entry.password } : {}),
    });
  });
  return { ...settings, auth: entries };
}

/** k6's shortcut options (`vus`/`duration`/`iterations`/`stages`) as one `default` scenario. */
function shortcutScenario(raw: Record<string, unknown>): Record<string, unknown> {
  const vus = raw.vus ?? 1;
  if (raw.stages !== undefined)
    return { default: { executor: 'ramping-vus', startVUs: vus, stages: raw.stages } };
  if (raw.iterations !== undefined) {
    return {
      default: { executor: 'shared-iterations', vus, iterations: raw.iterations, maxDuration: raw.duration },
    };
  }
  if (raw.duration !== undefined)
    return { default: { executor: 'constant-vus', vus, duration: raw.duration } };
  return { default: { executor: 'shared-iterations', vus: 1, iterations: 1 } };
}

/** A list of strings, or a problem naming the setting. */
function stringList(value: unknown, setting: string, example: string, problems: ConfigProblem[]): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    problems.push({ setting, message: 'is not a list of strings', hint: `use e.g. ${example}` });
    return [];
  }
  return value as string[];
}

/** k6's blockHostnames: exact names, or names after a leading `*` (`*.example.com`). */
function hostnamePatterns(value: unknown, problems: ConfigProblem[]): string[] {
  const setting = 'options.blockHostnames';
  const patterns = stringList(value, setting, "['*.example.com', 'internal.test']", problems);
  for (const pattern of patterns) {
    if (pattern === '' || pattern.lastIndexOf('*') > 0) {
      problems.push({
        setting,
        message: `"${pattern}" is not a hostname pattern`,
        hint: 'use a name, or * only at its start (*.example.com)',
      });
    }
  }
  return patterns.map((pattern) => pattern.toLowerCase());
}

/** k6's blacklistIPs: CIDR ranges, IPv4 or IPv6. */
function ipRanges(value: unknown, problems: ConfigProblem[]): string[] {
  const setting = 'options.blacklistIPs';
  const ranges = stringList(value, setting, "['10.0.0.0/8', 'fd00::/8']", problems);
  for (const range of ranges) {
    if (!parseCidr(range)) {
      problems.push({
        setting,
        message: `"${range}" is not a CIDR range`,
        hint: 'use an address and a prefix length, e.g. 10.0.0.0/8 or fd00::/8',
      });
    }
  }
  return ranges;
}

/** k6's systemTags: known names only; unset means k6's default set. */
function systemTags(value: unknown, problems: ConfigProblem[], warnings: string[]): SystemTag[] {
  if (value === undefined || value === null) return [...DEFAULT_SYSTEM_TAGS];
  const setting = 'options.systemTags';
  const names = stringList(value, setting, "['status', 'method', 'url', 'vu', 'iter']", problems);
  const tags: SystemTag[] = [];
  for (const name of names) {
    if (isSystemTag(name)) tags.push(name);
    else {
      problems.push({
        setting,
        message: `"${name}" is not a k6 system tag`,
        hint: 'use names such as status, method, url, name, group, scenario, check, error, error_code, proto, tls_version, expected_response, ip, vu, iter',
      });
    }
  }
  for (const tag of tags) {
    if (UNRECORDED_TAGS.has(tag)) {
      warnings.push(`options.systemTags: the embedded engine does not record ${tag}; its column stays empty`);
    }
  }
  return tags;
}
