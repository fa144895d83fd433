// `plateau engine run|schedule`: the embedded k6-compatible engine, with k6's flags.
import { createWriteStream, readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { type ConfigProblem, ERROR_CODES, EXIT_CODES, PlateauError } from '../../contract/index.ts';
import type { OptionOverrides } from '../../engine/config/options.ts';
import { type LogFormat, type Logger, stderrLogger, withoutDebug } from '../../engine/js/logger.ts';
import {
  type OutputSpec,
  type Progress,
  runTest,
  SUMMARY_MODES,
  type SummaryMode,
} from '../../engine/runner.ts';
import { printSchedule } from '../../engine/schedule-report.ts';
import { setSignalPolicy } from '../lifecycle.ts';

const ENV_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Parses repeated `-e K=V` flags (k6 requires names like shell variables). */
export function parseEnvFlags(values: string[], problems: ConfigProblem[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const value of values) {
    const eq = value.indexOf('=');
    const name = eq < 0 ? value : value.slice(0, eq);
    if (!ENV_NAME.test(name)) {
      problems.push({
        setting: '-e',
        message: `"${value}" is not NAME=value`,
        hint: 'names match [a-zA-Z_][a-zA-Z0-9_]*',
      });
      continue;
    }
    env[name] = eq < 0 ? (process.env[name] ?? '') : value.slice(eq + 1);
  }
  return env;
}

/** Parses repeated `--out csv=…` / `--out json=…` flags. */
export function parseOutFlags(values: string[], problems: ConfigProblem[]): OutputSpec[] {
  const specs: OutputSpec[] = [];
  for (const value of values) {
    const eq = value.indexOf('=');
    const type = eq < 0 ? value : value.slice(0, eq);
    if (type !== 'csv' && type !== 'json') {
      problems.push({
        setting: '--out',
        message: `"${type}" is not an output plateau's engine writes`,
        hint: 'use --out csv=FILE or --out json=FILE',
      });
      continue;
    }
    specs.push({ type, arg: eq < 0 ? '' : value.slice(eq + 1) });
  }
  return specs;
}

function parseTags(values: string[], problems: ConfigProblem[]): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq <= 0)
      problems.push({
        setting: '--tag',
        message: `"${value}" is not NAME=VALUE`,
        hint: 'e.g. --tag env=staging',
      });
    else tags[value.slice(0, eq)] = value.slice(eq + 1);
  }
  return tags;
}

/**
 * The summary mode from --summary-mode, K6_SUMMARY_MODE, --no-summary or K6_NO_SUMMARY (k6
 * v1's form of `disabled`), as k6 reads them: a flag wins over the environment.
 */
export function parseSummaryMode(
  flag: string | undefined,
  noSummary: boolean,
  env: NodeJS.ProcessEnv,
  problems: ConfigProblem[],
): SummaryMode {
  if (noSummary) return 'disabled';
  const noSummaryEnv = env.K6_NO_SUMMARY;
  if (flag === undefined && (noSummaryEnv === 'true' || noSummaryEnv === '1')) return 'disabled';
  const raw = flag ?? env.K6_SUMMARY_MODE;
  if (raw === undefined || raw === '') return 'compact';
  if ((SUMMARY_MODES as readonly string[]).includes(raw)) return raw as SummaryMode;
  problems.push({
    setting: flag === undefined ? 'K6_SUMMARY_MODE' : '--summary-mode',
    message: `"${raw}" is not a summary mode`,
    hint: `use ${SUMMARY_MODES.join(', ')}`,
  });
  return 'compact';
}

/** k6's shortcut flags: --vus, --duration, --iterations and --stage (repeatable, `30s:10`). */
export function parseShortcutFlags(
  options: Record<string, unknown>,
  problems: ConfigProblem[],
): NonNullable<OptionOverrides['shortcuts']> {
  const shortcuts: NonNullable<OptionOverrides['shortcuts']> = {};
  const whole = (flag: string, raw: unknown): number | undefined => {
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (String(raw).trim() === '' || !Number.isInteger(value) || value < 0) {
      problems.push({
        setting: flag,
        message: `"${String(raw)}" is not accepted`,
        hint: 'use a whole number, e.g. 10',
      });
      return undefined;
    }
    return value;
  };
  const vus = whole('--vus', options.vus);
  if (vus !== undefined) shortcuts.vus = vus;
  const iterations = whole('--iterations', options.iterations);
  if (iterations !== undefined) shortcuts.iterations = iterations;
  if (typeof options.duration === 'string') shortcuts.duration = options.duration;
  const stages = (options.stage as string[] | undefined) ?? [];
  if (stages.length > 0) {
    shortcuts.stages = [];
    for (const stage of stages) {
      const colon = stage.lastIndexOf(':');
      const target = Number(stage.slice(colon + 1));
      if (colon <= 0 || !Number.isInteger(target) || target < 0 || stage.slice(colon + 1).trim() === '') {
        problems.push({
          setting: '--stage',
          message: `"${stage}" is not accepted`,
          hint: 'use DURATION:TARGET, e.g. 30s:10',
        });
        continue;
      }
      shortcuts.stages.push({ duration: stage.slice(0, colon), target });
    }
  }
  return shortcuts;
}

/**
 * k6's --config file: a JSON object of options, ranked below the script's. k6 also keeps
 * output settings there (`collectors`, `ext`); they change nothing here and pass silently.
 */
export function readConfigFile(path: string, problems: ConfigProblem[]): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    problems.push({
      setting: '--config',
      message: `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      hint: 'give the path of a JSON file of k6 options',
    });
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    problems.push({
      setting: '--config',
      message: `${path} is not JSON: ${(error as Error).message}`,
      hint: 'write the options as one JSON object, e.g. {"vus": 10, "duration": "30s"}',
    });
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    problems.push({
      setting: '--config',
      message: `${path} holds no JSON object`,
      hint: 'write the options as one JSON object, e.g. {"vus": 10, "duration": "30s"}',
    });
    return undefined;
  }
  const { collectors: _collectors, ...options } = parsed as Record<string, unknown>;
  return options;
}

/** A flag's whole number (0 or more), or undefined when not given or (a problem) not one. */
function wholeNumberFlag(
  raw: unknown,
  flag: string,
  hint: string,
  problems: ConfigProblem[],
): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (Number.isInteger(value) && value >= 0 && String(raw).trim() !== '') return value;
  problems.push({ setting: flag, message: `"${String(raw)}" is not accepted`, hint });
  return undefined;
}

/** k6 flags that set script options (the script's values of the same name give way). */
export function scriptOptionFlags(
  options: Record<string, unknown>,
  problems: ConfigProblem[],
): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  if (typeof options.userAgent === 'string') set.userAgent = options.userAgent;
  const maxRedirects = wholeNumberFlag(
    options.maxRedirects,
    '--max-redirects',
    'use a whole number, 0 for none',
    problems,
  );
  if (maxRedirects !== undefined) set.maxRedirects = maxRedirects;
  if (options.connectionReuse === false) set.noConnectionReuse = true;
  if (options.vuConnectionReuse === false) set.noVUConnectionReuse = true;
  if (options.discardResponseBodies === true) set.discardResponseBodies = true;
  if (typeof options.setupTimeout === 'string') set.setupTimeout = options.setupTimeout;
  if (typeof options.teardownTimeout === 'string') set.teardownTimeout = options.teardownTimeout;
  if (options.httpDebug === true) set.httpDebug = 'headers';
  else if (options.httpDebug === 'full') set.httpDebug = 'full';
  else if (options.httpDebug !== undefined) {
    problems.push({
      setting: '--http-debug',
      message: `"${String(options.httpDebug)}" is not accepted`,
      hint: 'use --http-debug for headers or --http-debug=full for bodies too',
    });
  }
  if (options.setup === false) set.noSetup = true;
  if (options.teardown === false) set.noTeardown = true;
  const rps = wholeNumberFlag(
    options.rps,
    '--rps',
    'use a whole number of requests per second, 0 for no limit',
    problems,
  );
  if (rps !== undefined) set.rps = rps;
  if (typeof options.minIterationDuration === 'string')
    set.minIterationDuration = options.minIterationDuration;
  if (typeof options.summaryTimeUnit === 'string') set.summaryTimeUnit = options.summaryTimeUnit;
  // k6 takes these lists comma-separated.
  const list = (value: string) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  if (typeof options.blacklistIp === 'string') set.blacklistIPs = list(options.blacklistIp);
  if (typeof options.blockHostnames === 'string') set.blockHostnames = list(options.blockHostnames);
  if (typeof options.systemTags === 'string') set.systemTags = list(options.systemTags);
  // Accepted so that k6 command lines run unchanged; each is named in a warning, as the
  // same options in a script are (engine/config/options.ts, NOT_APPLIED).
  if (options.paused === true) set.paused = true;
  if (options.linger === true) set.linger = true;
  if (options.batch !== undefined) set.batch = options.batch;
  if (options.batchPerHost !== undefined) set.batchPerHost = options.batchPerHost;
  if (typeof options.dns === 'string') set.dns = options.dns;
  if (typeof options.localIps === 'string') set.localIPs = options.localIps;
  return set;
}

/**
 * The engine's log lines as k6's --log-output and --verbose route them: `stderr` (default),
 * `stdout`, `none` or `file=PATH` (appended); debug lines (console.debug among them) only
 * with --verbose. A bad value is a flag problem.
 */
export function cliLogger(
  logOutput: string | undefined,
  verbose: boolean,
  problems: ConfigProblem[],
  logFormat: string | undefined = undefined,
): { logger: Logger; close: () => Promise<void> } {
  const startedMs = Date.now();
  let format: LogFormat = 'text';
  if (logFormat === 'json' || logFormat === 'raw') format = logFormat;
  else if (logFormat !== undefined && logFormat !== '') {
    problems.push({
      setting: '--log-format',
      message: `"${logFormat}" is not accepted`,
      hint: "use json or raw, or leave it out for k6's text lines",
    });
  }
  const filtered = (logger: Logger) => (verbose ? logger : withoutDebug(logger));
  const none = { logger: { log: () => undefined }, close: async () => undefined };
  if (logOutput === undefined || logOutput === 'stderr') {
    const logger = stderrLogger(startedMs, undefined, undefined, format);
    return { logger: filtered(logger), close: async () => undefined };
  }
  if (logOutput === 'stdout') {
    const logger = stderrLogger(
      startedMs,
      (line) => process.stdout.write(line),
      process.stdout.isTTY === true,
      format,
    );
    return { logger: filtered(logger), close: async () => undefined };
  }
  if (logOutput === 'none') return none;
  if (logOutput.startsWith('file=') && logOutput.length > 'file='.length) {
    const stream = createWriteStream(logOutput.slice('file='.length), { flags: 'a' });
    stream.on('error', (error) => process.stderr.write(`plateau engine: --log-output: ${error.message}\n`));
    return {
      logger: filtered(stderrLogger(startedMs, (line) => stream.write(line), false, format)),
      close: () => new Promise<void>((resolve) => stream.end(resolve)),
    };
  }
  problems.push({
    setting: '--log-output',
    message: `"${logOutput}" is not accepted`,
    hint: 'use stderr, stdout, none or file=PATH',
  });
  return none;
}

/** k6's environment variables for flags that take a value: the flag wins, then the variable. */
const K6_VALUE_ENV: Readonly<Record<string, string>> = {
  '--vus': 'K6_VUS',
  '--duration': 'K6_DURATION',
  '--iterations': 'K6_ITERATIONS',
  '--user-agent': 'K6_USER_AGENT',
  '--max-redirects': 'K6_MAX_REDIRECTS',
  '--setup-timeout': 'K6_SETUP_TIMEOUT',
  '--teardown-timeout': 'K6_TEARDOWN_TIMEOUT',
  '--summary-export': 'K6_SUMMARY_EXPORT',
  '--console-output': 'K6_CONSOLE_OUTPUT',
  '--log-output': 'K6_LOG_OUTPUT',
  '--rps': 'K6_RPS',
  '--min-iteration-duration': 'K6_MIN_ITERATION_DURATION',
  '--summary-time-unit': 'K6_SUMMARY_TIME_UNIT',
  '--blacklist-ip': 'K6_BLACKLIST_IPS',
  '--block-hostnames': 'K6_BLOCK_HOSTNAMES',
  '--system-tags': 'K6_SYSTEM_TAGS',
  '--config': 'K6_CONFIG',
  '--log-format': 'K6_LOG_FORMAT',
  '--execution-segment': 'K6_EXECUTION_SEGMENT',
  '--execution-segment-sequence': 'K6_EXECUTION_SEGMENT_SEQUENCE',
};

/** An option that k6 also reads from an environment variable (K6_VALUE_ENV), so the help says which. */
function k6Option(flags: string, description: string): Option {
  const option = new Option(flags, description);
  const variable = K6_VALUE_ENV[option.long ?? ''];
  return variable ? option.env(variable) : option;
}

/** k6's environment variables for on/off flags: the option key, and its value when on. */
const K6_SWITCH_ENV: Readonly<Record<string, { key: string; on: unknown }>> = {
  K6_NO_CONNECTION_REUSE: { key: 'connectionReuse', on: false },
  K6_NO_VU_CONNECTION_REUSE: { key: 'vuConnectionReuse', on: false },
  K6_DISCARD_RESPONSE_BODIES: { key: 'discardResponseBodies', on: true },
  K6_NO_SETUP: { key: 'setup', on: false },
  K6_NO_TEARDOWN: { key: 'teardown', on: false },
  K6_THROW: { key: 'throw', on: true },
  K6_INSECURE_SKIP_TLS_VERIFY: { key: 'insecureSkipTlsVerify', on: true },
  K6_NO_THRESHOLDS: { key: 'thresholds', on: false },
  K6_HTTP_DEBUG: { key: 'httpDebug', on: true },
  K6_NEW_MACHINE_READABLE_SUMMARY: { key: 'newMachineReadableSummary', on: true },
};

/**
 * Applies k6's on/off environment variables (true/false/1/0; K6_HTTP_DEBUG also `full`),
 * K6_STAGES and K6_OUT to `options` where the command line did not set them, as k6 ranks
 * them: flag, then environment, then the script.
 */
export function applyK6Environment(
  command: Command,
  options: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  problems: ConfigProblem[],
): void {
  const fromCli = (key: string) => command.getOptionValueSource(key) === 'cli';
  for (const [name, { key, on }] of Object.entries(K6_SWITCH_ENV)) {
    const raw = env[name];
    if (raw === undefined || raw === '' || fromCli(key)) continue;
    if (name === 'K6_HTTP_DEBUG' && raw === 'full') options[key] = 'full';
    else if (raw === 'true' || raw === '1') options[key] = on;
    else if (raw !== 'false' && raw !== '0') {
      problems.push({ setting: name, message: `"${raw}" is not accepted`, hint: 'use true or false' });
    }
  }
  if (env.K6_STAGES && !fromCli('stage')) options.stage = env.K6_STAGES.split(',');
  if (env.K6_OUT && !fromCli('out')) options.out = [env.K6_OUT];
}

/** Throws one error naming every flag problem found. */
function checkFlags(problems: ConfigProblem[]): void {
  if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'flags');
}

/** One progress line for a terminal, rewritten in place. */
export function formatProgress(p: Progress): string {
  const parts = p.scenarios.map(
    (s) =>
      `${s.name} ${(s.progress * 100).toFixed(0).padStart(3)}%  VUs ${s.active}/${s.maxVUs}  iterations ${s.iterations}  dropped ${s.dropped}`,
  );
  return `running ${(p.elapsedMs / 1000).toFixed(1)}s  ${parts.join(' | ')}`;
}

export function registerEngine(program: Command): void {
  const engine = program
    .command('engine')
    .summary("run k6 scripts with plateau's embedded k6-compatible engine")
    .description(
      `The embedded load engine: runs k6 scripts in Node with k6's semantics (executors, VUs,
dropped iterations, tags, thresholds) and writes k6's own output formats. Flags follow
'k6 run', so a command line can switch between k6 and the embedded engine.`,
    );

  engine
    .command('run')
    .argument('<script>', 'a bundled script (dist/k6/*.js) or a .ts/.js k6 script')
    .description(
      [
        'Runs a k6 script. Exit codes follow k6: 0 ok, 99 thresholds crossed, 104 invalid config, 105 interrupted (outputs are still written), 107 script exception in init, setup or teardown, 108 exec.test.abort(), 110 exec.test.fail().',
        "Scripts must use k6's async forms (await http.asyncRequest, await sleep): the engine runs every VU on one event loop and cannot block. Module-level state is shared by all VUs (k6 gives each VU its own runtime).",
        'Modules: k6, k6/http (redirects, cookies, HTTP/2 over TLS), k6/execution, k6/metrics, k6/timers, k6/data, k6/encoding, k6/crypto. docs/engine.md lists every difference from k6.',
      ].join('\n\n'),
    )
    .option('-e, --env <NAME=value>', 'environment variable for the script (repeatable)', collect, [])
    .option('-o, --out <type=arg>', 'output: csv=FILE[.gz] or json=FILE[.gz] (repeatable)', collect, [])
    .addOption(
      k6Option('--summary-export <file>', 'write the end-of-test summary as k6 --summary-export JSON'),
    )
    .option(
      '--summary-trend-stats <stats>',
      'comma-separated trend statistics, e.g. avg,p(95),p(99) (or K6_SUMMARY_TREND_STATS)',
    )
    .option(
      '--summary-mode <mode>',
      'compact (default: thresholds, checks, main metrics by category), full (every metric, and each scenario with its groups), legacy (the pre-v1 layout) or disabled: no summary, handleSummary or export (or K6_SUMMARY_MODE)',
    )
    .option('--no-summary', "k6 v1's flag for --summary-mode disabled")
    .option(
      '--new-machine-readable-summary',
      "handleSummary gets, and --summary-export writes, k6's machine-readable summary (schema 1.0.0) (or K6_NEW_MACHINE_READABLE_SUMMARY)",
    )
    .option('--tag <NAME=VALUE>', 'tag added to every sample (repeatable)', collect, [])
    .addOption(
      k6Option(
        '-u, --vus <n>',
        'VUs of the default scenario (as k6; with no duration, iterations or stages it sizes the script’s shortcut options)',
      ),
    )
    .addOption(
      k6Option(
        '-d, --duration <duration>',
        'run a constant-vus default scenario this long, replacing the script’s scenarios (as k6)',
      ),
    )
    .addOption(
      k6Option(
        '-i, --iterations <n>',
        'run this many iterations shared by the VUs, replacing the script’s scenarios (as k6)',
      ),
    )
    .option(
      '-s, --stage <DURATION:TARGET>',
      'a ramping-vus stage, e.g. 30s:10 (repeatable; replaces the script’s scenarios, as k6)',
      collect,
      [],
    )
    .addOption(k6Option('--execution-segment <segment>', "this instance's share of the test, e.g. 0:1/2"))
    .addOption(k6Option('--execution-segment-sequence <sequence>', 'all segments of the test, e.g. 0,1/2,1'))
    .option('--no-thresholds', 'do not evaluate thresholds')
    .option('--insecure-skip-tls-verify', 'accept any server certificate (as options.insecureSkipTLSVerify)')
    .addOption(k6Option('--user-agent <ua>', 'User-Agent of requests that set none (as options.userAgent)'))
    .addOption(
      k6Option('--max-redirects <n>', 'redirects a request follows (as options.maxRedirects, default 10)'),
    )
    .option('--no-connection-reuse', 'a new connection for every request (as options.noConnectionReuse)')
    .option(
      '--no-vu-connection-reuse',
      "close a VU's connections after each iteration (as options.noVUConnectionReuse)",
    )
    .option('--discard-response-bodies', 'read and drop response bodies (as options.discardResponseBodies)')
    .addOption(
      k6Option(
        '--setup-timeout <duration>',
        'how long setup() may run (as options.setupTimeout, default 60s)',
      ),
    )
    .addOption(
      k6Option(
        '--teardown-timeout <duration>',
        'how long teardown() may run (as options.teardownTimeout, default 60s)',
      ),
    )
    .addOption(
      k6Option('--rps <n>', 'requests per second for the whole test, each waiting its turn (as options.rps)'),
    )
    .addOption(
      k6Option(
        '--min-iteration-duration <duration>',
        'an iteration shorter than this holds its VU for the rest (as options.minIterationDuration)',
      ),
    )
    .addOption(
      k6Option(
        '--blacklist-ip <cidrs>',
        'refuse requests to these ranges, comma-separated, e.g. 10.0.0.0/8 (as options.blacklistIPs; error 1110)',
      ),
    )
    .addOption(
      k6Option(
        '--block-hostnames <names>',
        'refuse requests to these names, comma-separated, * first allowed (as options.blockHostnames; error 1111)',
      ),
    )
    .addOption(
      k6Option(
        '--summary-time-unit <unit>',
        'show every time in the summary in s, ms or us (as options.summaryTimeUnit)',
      ),
    )
    .addOption(
      k6Option(
        '--system-tags <tags>',
        'the system tags samples carry, comma-separated, e.g. status,method,url,vu,iter (as options.systemTags; vu and iter become metadata)',
      ),
    )
    .addOption(
      k6Option(
        '-c, --config <file>',
        'a JSON file of k6 options, below the script’s own (as k6 --config; collectors are ignored)',
      ),
    )
    .option('--no-setup', 'do not run setup() (as options.noSetup)')
    .option('--no-teardown', 'do not run teardown() (as options.noTeardown)')
    .option('--http-debug [full]', 'log every request and response (headers; with =full, bodies too), as k6')
    .addOption(
      k6Option(
        '--console-output <file>',
        "append the script's console output to a file instead of stderr (as k6)",
      ),
    )
    .option('--no-color', "accepted for k6's command lines; the engine's output has no colour to turn off")
    .option('-a, --address <address>', "accepted for k6's command lines; the engine has no REST API (warned)")
    .option('-p, --paused', "accepted for k6's command lines; the engine starts at once (warned)")
    .option('-l, --linger', "accepted for k6's command lines; the engine exits when the test ends (warned)")
    .option('--batch <n>', "accepted for k6's command lines; only http.batch() reads it (warned)")
    .option('--batch-per-host <n>', "accepted for k6's command lines; only http.batch() reads it (warned)")
    .option(
      '--dns <spec>',
      "accepted for k6's command lines; names resolve through the system resolver (warned)",
    )
    .option(
      '--local-ips <ips>',
      "accepted for k6's command lines; requests leave from the default address (warned)",
    )
    .option('--no-usage-report', "accepted for k6's command lines; the engine reports nothing anywhere")
    .option(
      '-w, --throw',
      'a failed request (network, timeout, TLS) throws in the script instead of warning (as options.throw)',
    )
    .addOption(
      new Option('--include-system-env-vars [bool]', 'pass the system environment to __ENV (true/false)')
        .env('K6_INCLUDE_SYSTEM_ENV_VARS')
        .default(true),
    )
    .option('-q, --quiet', 'no progress output')
    .option('-v, --verbose', 'also print debug lines, console.debug among them (as k6)')
    .addOption(
      k6Option(
        '--log-format <format>',
        "log lines as json or raw (the message alone) instead of k6's text (as k6)",
      ),
    )
    .addOption(
      k6Option(
        '--log-output <where>',
        'where log lines go: stderr (default), stdout, none or file=PATH (as k6)',
      ),
    )
    .option(
      '--no-warm-up',
      'skip the rehearsal (2–4 s, against a local sink, never the target) that warms the engine before a test of 1,000/s or more',
    )
    .addHelpText(
      'after',
      `
Examples:
  plateau engine run dist/k6/capacity.js -e STEPS=20,40 -e HOLD=10 --out csv=run.csv.gz --summary-export=summary.json
  plateau engine run dist/k6/constant-rate.js -e RATE=40 -e DURATION=30s
  plateau engine run scripts/capacity.ts --execution-segment 0:1/2 --execution-segment-sequence 0,1/2,1`,
    )
    .action(async (script: string, options: Record<string, unknown>, command: Command) => {
      const problems: ConfigProblem[] = [];
      applyK6Environment(command, options, process.env, problems);
      const env = parseEnvFlags(options.env as string[], problems);
      const outputs = parseOutFlags(options.out as string[], problems);
      const tags = parseTags(options.tag as string[], problems);
      const shortcuts = parseShortcutFlags(options, problems);
      const optionFlags = scriptOptionFlags(options, problems);
      const configFile =
        typeof options.config === 'string' ? readConfigFile(options.config, problems) : undefined;
      const logs = cliLogger(
        options.logOutput as string | undefined,
        options.verbose === true,
        problems,
        options.logFormat as string | undefined,
      );
      const summaryMode = parseSummaryMode(
        options.summaryMode as string | undefined,
        options.summary === false,
        process.env,
        problems,
      );
      const trendStats =
        (options.summaryTrendStats as string | undefined) ?? process.env.K6_SUMMARY_TREND_STATS;
      checkFlags(problems);
      if (options.address !== undefined) {
        logs.logger.log('warning', '--address is not applied: the embedded engine has no REST API');
      }
      const stop = new AbortController();
      const interactive = process.stderr.isTTY === true && options.quiet !== true;
      const running = runTest({
        script,
        env,
        includeSystemEnv: !['false', '0', false].includes(options.includeSystemEnvVars as string | boolean),
        outputs,
        ...(options.summaryExport ? { summaryExport: options.summaryExport as string } : {}),
        summaryMode,
        ...(options.newMachineReadableSummary === true ? { machineReadableSummary: true } : {}),
        logger: logs.logger,
        ...(typeof options.consoleOutput === 'string' ? { consoleOutput: options.consoleOutput } : {}),
        overrides: {
          ...(trendStats ? { summaryTrendStats: trendStats.split(',') } : {}),
          tags,
          shortcuts,
          options: optionFlags,
          ...(configFile ? { configFile } : {}),
          noThresholds: options.thresholds === false,
          ...(options.insecureSkipTlsVerify === true ? { insecureSkipTLSVerify: true } : {}),
          ...(options.throw === true ? { throw: true } : {}),
          ...(options.executionSegment ? { executionSegment: options.executionSegment as string } : {}),
          ...(options.executionSegmentSequence
            ? { executionSegmentSequence: options.executionSegmentSequence as string }
            : {}),
        },
        warmUp: options.warmUp !== false,
        signal: stop.signal,
        ...(interactive
          ? { onProgress: (p: Progress) => process.stderr.write(`\r\x1b[K${formatProgress(p)}`) }
          : {}),
      });
      // On SIGINT/SIGTERM the run stops starting iterations, writes what it gathered, then exits 105.
      setSignalPolicy({
        exitCode: () => EXIT_CODES.interrupted,
        onSignal: () => stop.abort(),
        drain: () => running,
      });
      const result = await running.finally(logs.close);
      if (interactive) process.stderr.write('\n');
      if (result.exitCode !== 0 && result.reason) process.stderr.write(`plateau engine: ${result.reason}\n`);
      process.exitCode = result.exitCode;
    });

  engine
    .command('schedule')
    .argument('<script>', 'a bundled script or a .ts/.js k6 script')
    .description(
      `Prints the planned start of every iteration of each arrival-rate scenario, in ms from
the scenario start with 6 decimals, one per line, without sending any traffic. The plan
is exactly what 'engine run' (and real k6) would start.`,
    )
    .option('-e, --env <NAME=value>', 'environment variable for the script (repeatable)', collect, [])
    .option('--execution-segment <segment>', "this instance's share, e.g. 0:1/2")
    .option('--execution-segment-sequence <sequence>', 'all segments, e.g. 0,1/2,1')
    .addHelpText(
      'after',
      '\nExample:\n  plateau engine schedule dist/k6/capacity.js -e STEPS=10,20 -e HOLD=5 | head',
    )
    .action(async (script: string, options: Record<string, unknown>) => {
      const problems: ConfigProblem[] = [];
      const env = parseEnvFlags(options.env as string[], problems);
      checkFlags(problems);
      await printSchedule({
        script,
        env,
        ...(options.executionSegment ? { executionSegment: options.executionSegment as string } : {}),
        ...(options.executionSegmentSequence
          ? { executionSegmentSequence: options.executionSegmentSequence as string }
          : {}),
        write: (text) => process.stdout.write(text),
      }).catch((error: unknown) => {
        if (error instanceof PlateauError) throw error;
        throw new PlateauError(ERROR_CODES.INPUT, error instanceof Error ? error.message : String(error));
      });
    });
}
