// Every flag of `plateau engine run`, declared once. The commander options, the K6_*
// environment fallbacks, the script options the flags set and the flag reference in
// docs/engine.md are all made from this table (test/engine-flags.test.ts checks the docs).
import { type Command, Option } from 'commander';
import type { ConfigProblem } from '../../contract/index.ts';
import { describeRange, parseNumberText } from '../../lib/number-text.ts';

/**
 * What a flag takes: `text` a value; `whole` a whole number (0 or more); `list` a
 * comma-separated list; `repeat` a value each time it is given (collected); `switch` no
 * value (its variable: true/false/1/0); `optional` a switch that may carry a value.
 */
export type FlagKind = 'text' | 'whole' | 'list' | 'repeat' | 'switch' | 'optional';

export type FlagGroup = 'run' | 'scenario' | 'option' | 'log' | 'k6-only';

export interface EngineFlag {
  /** As commander writes it: `-u, --vus <n>`, `--no-setup`, `--http-debug [full]`. */
  flags: string;
  description: string;
  kind: FlagKind;
  group: FlagGroup;
  /** k6's environment variable for it, read when the flag is not given. */
  env?: string;
  /**
   * The script option it sets (the script's value of that name gives way): a switch sets
   * it to `on` (default true), a value flag to its value (a whole number, a list).
   */
  option?: string;
  on?: unknown;
  /** What to write instead of a bad value. */
  hint?: string;
  /** The value when neither the flag nor its variable is given. */
  defaultValue?: unknown;
  /**
   * An `optional` flag's accepted values: text → value; `bare` is its value when given
   * without one. Without these it takes true/false/1/0.
   */
  choices?: Readonly<Record<string, unknown>>;
  bare?: unknown;
  /** Its variable holds a comma-separated list of what the flag takes one at a time. */
  envList?: boolean;
}

const OUTPUT_FLAGS: EngineFlag[] = [
  {
    flags: '-e, --env <NAME=value>',
    kind: 'repeat',
    group: 'run',
    description: 'environment variable for the script (repeatable)',
  },
  {
    flags: '-o, --out <type=arg>',
    kind: 'repeat',
    group: 'run',
    env: 'K6_OUT',
    description: 'output: csv=FILE[.gz] or json=FILE[.gz] (repeatable)',
  },
  {
    flags: '--summary-export <file>',
    kind: 'text',
    group: 'run',
    env: 'K6_SUMMARY_EXPORT',
    description: 'write the end-of-test summary as k6 --summary-export JSON',
  },
  {
    flags: '--summary-trend-stats <stats>',
    kind: 'list',
    group: 'run',
    env: 'K6_SUMMARY_TREND_STATS',
    description: 'comma-separated trend statistics, e.g. avg,p(95),p(99)',
  },
  {
    flags: '--summary-mode <mode>',
    kind: 'text',
    group: 'run',
    env: 'K6_SUMMARY_MODE',
    description:
      'compact (default: thresholds, checks, main metrics by category), full (every metric, and each scenario with its groups), legacy (the pre-v1 layout) or disabled: no summary, handleSummary or export',
  },
  {
    flags: '--no-summary',
    kind: 'switch',
    group: 'run',
    env: 'K6_NO_SUMMARY',
    description: "k6 v1's flag for --summary-mode disabled",
  },
  {
    flags: '--new-machine-readable-summary',
    kind: 'switch',
    group: 'run',
    env: 'K6_NEW_MACHINE_READABLE_SUMMARY',
    description:
      "handleSummary gets, and --summary-export writes, k6's machine-readable summary (schema 1.0.0)",
  },
  {
    flags: '--tag <NAME=VALUE>',
    kind: 'repeat',
    group: 'run',
    description: 'tag added to every sample (repeatable)',
  },
  {
    flags: '--no-thresholds',
    kind: 'switch',
    group: 'run',
    env: 'K6_NO_THRESHOLDS',
    description: 'do not evaluate thresholds',
  },
  {
    flags: '-c, --config <file>',
    kind: 'text',
    group: 'run',
    env: 'K6_CONFIG',
    description: 'a JSON file of k6 options, below the script’s own (as k6 --config; collectors are ignored)',
  },
  {
    flags: '--console-output <file>',
    kind: 'text',
    group: 'run',
    env: 'K6_CONSOLE_OUTPUT',
    description: "append the script's console output to a file instead of stderr (as k6)",
  },
  {
    flags: '--include-system-env-vars [bool]',
    kind: 'optional',
    group: 'run',
    env: 'K6_INCLUDE_SYSTEM_ENV_VARS',
    defaultValue: true,
    description: 'pass the system environment to __ENV (true/false)',
  },
  { flags: '-q, --quiet', kind: 'switch', group: 'run', description: 'no progress output' },
  {
    flags: '-a, --address <address>',
    kind: 'text',
    group: 'run',
    env: 'K6_ADDRESS',
    description:
      "serve k6's REST API there (host:port): GET /v1/status, /v1/metrics and /v1/metrics/{id}, read-only; off when not given (k6 v0.x: on at localhost:6565)",
  },
  {
    flags: '--workers <count>',
    kind: 'text',
    group: 'run',
    description:
      'run the test as one on this many engine processes, one per core (auto: the cores this process may use, less one for a target on this machine); plateau’s own',
  },
  {
    flags: '--no-warm-up',
    kind: 'switch',
    group: 'run',
    description:
      'skip the rehearsal (2–4 s, against a local sink, never the target) that warms the engine before a test of 1,000/s or more (plateau’s own)',
  },
];

const SCENARIO_FLAGS: EngineFlag[] = [
  {
    flags: '-u, --vus <n>',
    kind: 'whole',
    group: 'scenario',
    env: 'K6_VUS',
    hint: 'use a whole number, e.g. 10',
    description:
      'VUs of the default scenario (as k6; with no duration, iterations or stages it sizes the script’s shortcut options)',
  },
  {
    flags: '-d, --duration <duration>',
    kind: 'text',
    group: 'scenario',
    env: 'K6_DURATION',
    description: 'run a constant-vus default scenario this long, replacing the script’s scenarios (as k6)',
  },
  {
    flags: '-i, --iterations <n>',
    kind: 'whole',
    group: 'scenario',
    env: 'K6_ITERATIONS',
    hint: 'use a whole number, e.g. 10',
    description: 'run this many iterations shared by the VUs, replacing the script’s scenarios (as k6)',
  },
  {
    flags: '-s, --stage <DURATION:TARGET>',
    kind: 'repeat',
    group: 'scenario',
    env: 'K6_STAGES',
    envList: true,
    description: 'a ramping-vus stage, e.g. 30s:10 (repeatable; replaces the script’s scenarios, as k6)',
  },
  {
    flags: '--execution-segment <segment>',
    kind: 'text',
    group: 'scenario',
    env: 'K6_EXECUTION_SEGMENT',
    description: "this instance's share of the test, e.g. 0:1/2",
  },
  {
    flags: '--execution-segment-sequence <sequence>',
    kind: 'text',
    group: 'scenario',
    env: 'K6_EXECUTION_SEGMENT_SEQUENCE',
    description: 'all segments of the test, e.g. 0,1/2,1',
  },
];

const OPTION_FLAGS: EngineFlag[] = [
  {
    flags: '--insecure-skip-tls-verify',
    kind: 'switch',
    group: 'option',
    env: 'K6_INSECURE_SKIP_TLS_VERIFY',
    option: 'insecureSkipTLSVerify',
    description: 'accept any server certificate',
  },
  {
    flags: '-w, --throw',
    kind: 'switch',
    group: 'option',
    env: 'K6_THROW',
    option: 'throw',
    description: 'a failed request (network, timeout, TLS) throws in the script instead of warning',
  },
  {
    flags: '--user-agent <ua>',
    kind: 'text',
    group: 'option',
    env: 'K6_USER_AGENT',
    option: 'userAgent',
    description: 'User-Agent of requests that set none',
  },
  {
    flags: '--max-redirects <n>',
    kind: 'whole',
    group: 'option',
    env: 'K6_MAX_REDIRECTS',
    option: 'maxRedirects',
    hint: 'use a whole number, 0 for none',
    description: 'redirects a request follows (default 10)',
  },
  {
    flags: '--no-connection-reuse',
    kind: 'switch',
    group: 'option',
    env: 'K6_NO_CONNECTION_REUSE',
    option: 'noConnectionReuse',
    description: 'a new connection for every request',
  },
  {
    flags: '--no-vu-connection-reuse',
    kind: 'switch',
    group: 'option',
    env: 'K6_NO_VU_CONNECTION_REUSE',
    option: 'noVUConnectionReuse',
    description: "close a VU's connections after each iteration",
  },
  {
    flags: '--discard-response-bodies',
    kind: 'switch',
    group: 'option',
    env: 'K6_DISCARD_RESPONSE_BODIES',
    option: 'discardResponseBodies',
    description: 'read and drop response bodies',
  },
  {
    flags: '--setup-timeout <duration>',
    kind: 'text',
    group: 'option',
    env: 'K6_SETUP_TIMEOUT',
    option: 'setupTimeout',
    description: 'how long setup() may run (default 60s)',
  },
  {
    flags: '--teardown-timeout <duration>',
    kind: 'text',
    group: 'option',
    env: 'K6_TEARDOWN_TIMEOUT',
    option: 'teardownTimeout',
    description: 'how long teardown() may run (default 60s)',
  },
  {
    flags: '--no-setup',
    kind: 'switch',
    group: 'option',
    env: 'K6_NO_SETUP',
    option: 'noSetup',
    description: 'do not run setup()',
  },
  {
    flags: '--no-teardown',
    kind: 'switch',
    group: 'option',
    env: 'K6_NO_TEARDOWN',
    option: 'noTeardown',
    description: 'do not run teardown()',
  },
  {
    flags: '--rps <n>',
    kind: 'whole',
    group: 'option',
    env: 'K6_RPS',
    option: 'rps',
    hint: 'use a whole number of requests per second, 0 for no limit',
    description: 'requests per second for the whole test, each waiting its turn',
  },
  {
    flags: '--min-iteration-duration <duration>',
    kind: 'text',
    group: 'option',
    env: 'K6_MIN_ITERATION_DURATION',
    option: 'minIterationDuration',
    description: 'an iteration shorter than this holds its VU for the rest',
  },
  {
    flags: '--blacklist-ip <cidrs>',
    kind: 'list',
    group: 'option',
    env: 'K6_BLACKLIST_IPS',
    option: 'blacklistIPs',
    description: 'refuse requests to these ranges, e.g. 10.0.0.0/8 (error 1110)',
  },
  {
    flags: '--block-hostnames <names>',
    kind: 'list',
    group: 'option',
    env: 'K6_BLOCK_HOSTNAMES',
    option: 'blockHostnames',
    description: 'refuse requests to these names, * first allowed (error 1111)',
  },
  {
    flags: '--summary-time-unit <unit>',
    kind: 'text',
    group: 'option',
    env: 'K6_SUMMARY_TIME_UNIT',
    option: 'summaryTimeUnit',
    description: 'show every time in the summary in s, ms or us',
  },
  {
    flags: '--system-tags <tags>',
    kind: 'list',
    group: 'option',
    env: 'K6_SYSTEM_TAGS',
    option: 'systemTags',
    description:
      'the system tags samples carry, e.g. status,method,url,vu,iter (vu and iter become metadata)',
  },
  {
    flags: '--http-debug [full]',
    kind: 'optional',
    group: 'option',
    env: 'K6_HTTP_DEBUG',
    option: 'httpDebug',
    choices: { full: 'full', true: 'headers', '1': 'headers', false: false, '0': false },
    bare: 'headers',
    hint: 'use --http-debug for headers or --http-debug=full for bodies too; before the script, write --http-debug=full or put the script first',
    description: 'log every request and response (headers; with =full, bodies too)',
  },
];

const LOG_FLAGS: EngineFlag[] = [
  {
    flags: '-v, --verbose',
    kind: 'switch',
    group: 'log',
    description: 'also print debug lines, console.debug among them (as k6)',
  },
  {
    flags: '--log-format <format>',
    kind: 'text',
    group: 'log',
    env: 'K6_LOG_FORMAT',
    description: "log lines as json or raw (the message alone) instead of k6's text (as k6)",
  },
  {
    flags: '--log-output <where>',
    kind: 'text',
    group: 'log',
    env: 'K6_LOG_OUTPUT',
    description: 'where log lines go: stderr (default), stdout, none or file=PATH (as k6)',
  },
];

/** Accepted so that k6 command lines run unchanged; those that would change a run are warned about. */
const K6_ONLY_FLAGS: EngineFlag[] = [
  {
    flags: '--no-color',
    kind: 'switch',
    group: 'k6-only',
    description: "accepted for k6's command lines; the engine's output has no colour to turn off",
  },
  {
    flags: '--no-usage-report',
    kind: 'switch',
    group: 'k6-only',
    description: "accepted for k6's command lines; the engine reports nothing anywhere",
  },
  {
    flags: '-p, --paused',
    kind: 'switch',
    group: 'k6-only',
    option: 'paused',
    description: "accepted for k6's command lines; the engine starts at once (warned)",
  },
  {
    flags: '-l, --linger',
    kind: 'switch',
    group: 'k6-only',
    option: 'linger',
    description: "accepted for k6's command lines; the engine exits when the test ends (warned)",
  },
  {
    flags: '--batch <n>',
    kind: 'text',
    group: 'k6-only',
    option: 'batch',
    description: "accepted for k6's command lines; only http.batch() reads it (warned)",
  },
  {
    flags: '--batch-per-host <n>',
    kind: 'text',
    group: 'k6-only',
    option: 'batchPerHost',
    description: "accepted for k6's command lines; only http.batch() reads it (warned)",
  },
  {
    flags: '--dns <spec>',
    kind: 'text',
    group: 'k6-only',
    option: 'dns',
    description: "accepted for k6's command lines; names resolve through the system resolver (warned)",
  },
  {
    flags: '--local-ips <ips>',
    kind: 'text',
    group: 'k6-only',
    option: 'localIPs',
    description: "accepted for k6's command lines; requests leave from the default address (warned)",
  },
];

export const ENGINE_FLAGS: readonly EngineFlag[] = [
  ...OUTPUT_FLAGS,
  ...SCENARIO_FLAGS,
  ...OPTION_FLAGS,
  ...LOG_FLAGS,
  ...K6_ONLY_FLAGS,
];

/** commander's Option for a flag (its variable shown in the help). */
function commanderOption(flag: EngineFlag): Option {
  const described = flag.option ? `${flag.description} (as options.${flag.option})` : flag.description;
  const option = new Option(flag.flags, flag.env ? `${described} [env: ${flag.env}]` : described);
  if (flag.kind === 'repeat') option.argParser(collect).default([]);
  return option;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Adds every flag of the table to `command`. */
export function addEngineFlags(command: Command): Command {
  for (const flag of ENGINE_FLAGS) command.addOption(commanderOption(flag));
  return command;
}

/** commander's key for a flag: `--no-setup` → setup, `--max-redirects` → maxRedirects. */
export function flagKey(flag: EngineFlag): string {
  return new Option(flag.flags).attributeName();
}

/** The long name: `--max-redirects`. */
export function longName(flag: EngineFlag): string {
  return new Option(flag.flags).long ?? flag.flags;
}

/** The flags' values after the command line, then k6's variables, then the defaults. */
export interface EngineFlagValues {
  /** The value of the flag whose long name is `long` (`--vus`): its text, list or true. */
  get(long: string): unknown;
  /** Where it came from: the command line, its variable, or neither. */
  source(long: string): 'cli' | 'env' | undefined;
  /** Whether a switch was given (on the command line or by its variable). */
  on(long: string): boolean;
  /** The script options the flags set. */
  scriptOptions: Record<string, unknown>;
}

const SWITCH_TEXT: Readonly<Record<string, boolean>> = { true: true, '1': true, false: false, '0': false };

/**
 * Reads every flag as k6 ranks them: the command line, then its K6_* variable, then the
 * default. Bad values (a whole number that is not one, a switch variable other than
 * true/false/1/0) become problems naming the flag or variable they came from.
 */
export function readEngineFlags(
  command: Command,
  parsed: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  problems: ConfigProblem[],
): EngineFlagValues {
  const values = new Map<string, unknown>();
  const sources = new Map<string, 'cli' | 'env'>();
  const scriptOptions: Record<string, unknown> = {};
  for (const flag of ENGINE_FLAGS) {
    const key = flagKey(flag);
    const long = longName(flag);
    const fromCli = command.getOptionValueSource(key) === 'cli';
    const variable = flag.env === undefined ? undefined : env[flag.env];
    const fromEnv = !fromCli && variable !== undefined && variable !== '';
    const setting = fromCli || !fromEnv ? long : (flag.env as string);
    if (fromCli || fromEnv) sources.set(long, fromCli ? 'cli' : 'env');
    let value: unknown;
    if (flag.kind === 'switch') {
      if (fromCli) value = true;
      else if (fromEnv) {
        value = SWITCH_TEXT[variable as string];
        if (value === undefined)
          problems.push({ setting, message: `"${variable}" is not accepted`, hint: 'use true or false' });
      }
    } else if (fromCli || fromEnv) {
      const raw = fromCli ? parsed[key] : variable;
      value = interpret(flag, raw, fromCli, setting, problems);
    }
    if (value === undefined && flag.kind !== 'switch')
      value = flag.kind === 'repeat' ? [] : flag.defaultValue;
    values.set(long, value);
    if (flag.option !== undefined && value !== undefined && value !== false) {
      scriptOptions[flag.option] = flag.kind === 'switch' ? (flag.on ?? true) : value;
    }
  }
  return {
    get: (long) => values.get(long),
    source: (long) => sources.get(long),
    on: (long) => values.get(long) === true,
    scriptOptions,
  };
}

/** A given flag's value, by its kind. */
function interpret(
  flag: EngineFlag,
  raw: unknown,
  fromCli: boolean,
  setting: string,
  problems: ConfigProblem[],
): unknown {
  const bad = (hint: string) => {
    problems.push({ setting, message: `"${String(raw)}" is not accepted`, hint });
    return undefined;
  };
  switch (flag.kind) {
    case 'text':
      return String(raw);
    case 'whole': {
      const value = parseNumberText(String(raw), { min: 0, integer: true });
      return value ?? bad(flag.hint ?? `use ${describeRange({ min: 0, integer: true })}`);
    }
    case 'list':
      return String(raw)
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
    case 'repeat':
      // K6_STAGES=30s:10,1m:20 is --stage given twice; K6_OUT is one --out.
      return fromCli ? raw : flag.envList ? String(raw).split(',') : [String(raw)];
    case 'optional': {
      if (raw === true) return flag.bare ?? true;
      const value = (flag.choices ?? SWITCH_TEXT)[String(raw)];
      return value ?? bad(flag.hint ?? 'use true or false');
    }
    case 'switch':
      return true;
  }
}

const GROUP_TITLES: Readonly<Record<FlagGroup, string>> = {
  run: 'run',
  scenario: 'scenario',
  option: 'script option',
  log: 'logging',
  'k6-only': 'k6 only',
};

/** The flag reference of docs/engine.md, one row a flag, as a markdown table. */
export function flagReferenceRows(): string[][] {
  return ENGINE_FLAGS.map((flag) => [
    `\`${flag.flags}\``,
    GROUP_TITLES[flag.group],
    flag.env ? `\`${flag.env}\`` : '',
    flag.option ? `\`options.${flag.option}\`` : '',
    flag.description.replaceAll('|', '\\|'),
  ]);
}

export const FLAG_REFERENCE_HEADER = ['flag', 'kind', 'environment', 'sets', 'what it does'];

export function flagReferenceTable(): string {
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    row(FLAG_REFERENCE_HEADER),
    row(FLAG_REFERENCE_HEADER.map(() => '---')),
    ...flagReferenceRows().map(row),
  ].join('\n');
}
