// `plateau engine run|schedule`: the embedded k6-compatible engine, with k6's flags.
import { createWriteStream, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import { type ConfigProblem, ERROR_CODES, EXIT_CODES, PlateauError } from '../../contract/index.ts';
import type { OptionOverrides } from '../../engine/config/options.ts';
import { type LogFormat, type Logger, stderrLogger, withoutDebug } from '../../engine/js/logger.ts';
import { engineNodeFlags } from '../../engine/node-flags.ts';
import { parseRestAddress } from '../../engine/rest-api.ts';
import {
  type OutputSpec,
  outputFileName,
  type Progress,
  type RunResult,
  runTest,
  SUMMARY_MODES,
  type SummaryMode,
} from '../../engine/runner.ts';
import { printSchedule } from '../../engine/schedule-report.ts';
import { runWithWorkers } from '../../engine/workers/coordinator.ts';
import { startWorker } from '../../engine/workers/worker.ts';
import { receiveInit } from '../../engine/workers/worker-link.ts';
import { ENGINE_RUN_RESERVED_CORES, parseWorkers } from '../../engine/workers/worker-plan.ts';
import type { WorkerCommand } from '../../engine/workers/worker-process.ts';
import { parseNumberText } from '../../lib/number-text.ts';
import { setSignalPolicy } from '../lifecycle.ts';
import { PLATEAU_BIN } from '../study/target.ts';
import { addEngineFlags, type EngineFlagValues, readEngineFlags } from './engine-flags.ts';

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
export function parseSummaryMode(flags: EngineFlagValues, problems: ConfigProblem[]): SummaryMode {
  const noSummary = flags.source('--no-summary');
  if (
    noSummary === 'cli' ||
    (noSummary === 'env' && flags.on('--no-summary') && flags.source('--summary-mode') !== 'cli')
  ) {
    return 'disabled';
  }
  const raw = flags.get('--summary-mode') as string | undefined;
  if (raw === undefined || raw === '') return 'compact';
  if ((SUMMARY_MODES as readonly string[]).includes(raw)) return raw as SummaryMode;
  problems.push({
    setting: flags.source('--summary-mode') === 'env' ? 'K6_SUMMARY_MODE' : '--summary-mode',
    message: `"${raw}" is not a summary mode`,
    hint: `use ${SUMMARY_MODES.join(', ')}`,
  });
  return 'compact';
}

/** k6's shortcut flags: --vus, --duration, --iterations and --stage (repeatable, `30s:10`). */
export function parseShortcutFlags(
  flags: EngineFlagValues,
  problems: ConfigProblem[],
): NonNullable<OptionOverrides['shortcuts']> {
  const shortcuts: NonNullable<OptionOverrides['shortcuts']> = {};
  const vus = flags.get('--vus') as number | undefined;
  if (vus !== undefined) shortcuts.vus = vus;
  const iterations = flags.get('--iterations') as number | undefined;
  if (iterations !== undefined) shortcuts.iterations = iterations;
  const duration = flags.get('--duration') as string | undefined;
  if (duration !== undefined) shortcuts.duration = duration;
  const stages = flags.get('--stage') as string[];
  if (stages.length > 0) {
    shortcuts.stages = [];
    for (const stage of stages) {
      const colon = stage.lastIndexOf(':');
      const target =
        colon <= 0 ? undefined : parseNumberText(stage.slice(colon + 1), { min: 0, integer: true });
      if (target === undefined) {
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

/**
 * How the coordinator starts a worker: this CLI's `engine worker`, with the engine's Node
 * flags (workers are engine processes; V8 takes them only at start) and without a debugger
 * flag (every worker would ask for the same inspector port).
 */
function workerCommand(): WorkerCommand {
  const inherited = process.execArgv.filter((flag) => !flag.startsWith('--inspect'));
  return {
    modulePath: PLATEAU_BIN,
    args: ['engine', 'worker'],
    execArgv: [...new Set([...inherited, ...engineNodeFlags()])],
  };
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

  const run = engine
    .command('run')
    .argument('<script>', 'a bundled script (dist/k6/*.js) or a .ts/.js k6 script')
    .description(
      [
        'Runs a k6 script. Exit codes follow k6: 0 ok, 99 thresholds crossed, 104 invalid config, 105 interrupted (outputs are still written), 106 the REST API cannot listen on --address, 107 script exception in init, setup or teardown, 108 exec.test.abort(), 110 exec.test.fail(); and plateau’s 122, an engine worker died (--workers), and 124, an output’s file stopped taking the samples (a full disk, a reader gone, or more than 256 MB waiting for it).',
        "Scripts run as k6 writes them: the blocking http.get/post/…/batch, sleep and group are rewritten at load to be awaited, VU by VU (what cannot be followed, such as http.get in a forEach callback, fails at load naming the line); the async forms (await http.asyncRequest) run as they are. Each VU has its own instance of the script's module state, as in k6.",
        'Modules: k6, k6/http (redirects, cookies, HTTP/2 over TLS), k6/execution, k6/metrics, k6/timers, k6/data, k6/encoding, k6/crypto. docs/engine.md lists every difference from k6.',
        `One engine process holds about 10,000 requests/s on one core. --workers N runs the test on N processes, each on its own execution segment, as one test: setup() and teardown() once, one progress line, one REST API, thresholds and abortOnFail over every worker's metrics, one file per --out and one summary; Ctrl-C stops them all with their data kept, and a worker that dies fails the test (exit 122) with the others' data kept. --workers auto is the cores this process may use (os.availableParallelism: ${availableParallelism()} here) less one for a target on the same machine, at least 1; against a remote target from a machine of its own, give the count. More workers than cores are refused (they would delay each other's starts), as is --workers with --execution-segment (split over machines with segments, over cores with workers).`,
      ].join('\n\n'),
    )
    .addHelpText(
      'after',
      `
Examples:
  plateau engine run dist/k6/capacity.js -e STEPS=20,40 -e HOLD=10 --out csv=run.csv.gz --summary-export=summary.json
  plateau engine run dist/k6/constant-rate.js -e RATE=40 -e DURATION=30s
  plateau engine run scripts/capacity.ts --execution-segment 0:1/2 --execution-segment-sequence 0,1/2,1
  plateau engine run dist/k6/constant-rate.js -e RATE=20000 -e DURATION=1m --workers auto --out csv=run.csv.gz`,
    )
    .action(async (script: string, parsed: Record<string, unknown>, command: Command) => {
      const problems: ConfigProblem[] = [];
      const flags = readEngineFlags(command, parsed, process.env, problems);
      const text = (long: string) => flags.get(long) as string | undefined;
      const env = parseEnvFlags(flags.get('--env') as string[], problems);
      const outputs = parseOutFlags(flags.get('--out') as string[], problems);
      const tags = parseTags(flags.get('--tag') as string[], problems);
      const shortcuts = parseShortcutFlags(flags, problems);
      const config = text('--config');
      const configFile = config === undefined ? undefined : readConfigFile(config, problems);
      const logs = cliLogger(text('--log-output'), flags.on('--verbose'), problems, text('--log-format'));
      const summaryMode = parseSummaryMode(flags, problems);
      const trendStats = flags.get('--summary-trend-stats') as string[] | undefined;
      // k6's REST API subset, only when asked for (an empty value, as in k6 v2, turns it off).
      const address = text('--address');
      const restAddress =
        address === undefined || address === ''
          ? undefined
          : parseRestAddress(
              address,
              problems,
              flags.source('--address') === 'env' ? 'K6_ADDRESS' : '--address',
            );
      const segment = text('--execution-segment');
      const sequence = text('--execution-segment-sequence');
      const includeSystemEnv = flags.get('--include-system-env-vars') !== false;
      const workersText = text('--workers');
      const workers =
        workersText === undefined
          ? undefined
          : parseWorkers(
              workersText,
              {
                cores: availableParallelism(),
                reservedCores: ENGINE_RUN_RESERVED_CORES,
                segmented: segment !== undefined || sequence !== undefined,
                outputToStdout: outputs.some((o) => outputFileName(o, { ...process.env, ...env }) === '-'),
              },
              problems,
            );
      checkFlags(problems);
      const stop = new AbortController();
      const interactive = process.stderr.isTTY === true && !flags.on('--quiet');
      const summaryExport = text('--summary-export');
      const consoleOutput = text('--console-output');
      const test = {
        script,
        env,
        includeSystemEnv,
        outputs,
        ...(summaryExport ? { summaryExport } : {}),
        summaryMode,
        ...(flags.on('--new-machine-readable-summary') ? { machineReadableSummary: true } : {}),
        ...(consoleOutput !== undefined ? { consoleOutput } : {}),
        overrides: {
          ...(trendStats && trendStats.length > 0 ? { summaryTrendStats: trendStats } : {}),
          tags,
          shortcuts,
          options: flags.scriptOptions,
          ...(configFile ? { configFile } : {}),
          noThresholds: flags.on('--no-thresholds'),
          ...(segment ? { executionSegment: segment } : {}),
          ...(sequence ? { executionSegmentSequence: sequence } : {}),
        },
        warmUp: !flags.on('--no-warm-up'),
      };
      const onProgress = interactive
        ? (p: Progress) => process.stderr.write(`\r\x1b[K${formatProgress(p)}`)
        : undefined;
      const running: Promise<RunResult> =
        workers === undefined
          ? runTest({
              ...test,
              logger: logs.logger,
              ...(restAddress ? { restAddress } : {}),
              signal: stop.signal,
              ...(onProgress ? { onProgress } : {}),
            })
          : runWithWorkers({
              run: test,
              workers,
              logging: {
                output: text('--log-output'),
                verbose: flags.on('--verbose'),
                format: text('--log-format'),
              },
              command: workerCommand(),
              logger: logs.logger,
              ...(restAddress ? { restAddress } : {}),
              signal: stop.signal,
              ...(onProgress ? { onProgress } : {}),
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
  addEngineFlags(run);

  // One process of `engine run --workers N`, started by its coordinator with an IPC channel.
  engine
    .command('worker', { hidden: true })
    .description('one process of `plateau engine run --workers`, which starts it')
    .action(async () => {
      const received = await receiveInit(process);
      const init = received.init;
      const problems: ConfigProblem[] = [];
      const { output, verbose, format } = init.logging;
      const logs = cliLogger(output, verbose, problems, format);
      const worker = startWorker(received, logs.logger, process);
      // A signal (a terminal's Ctrl-C reaches the whole group) ends its share as the coordinator's stop does.
      setSignalPolicy({
        exitCode: () => EXIT_CODES.interrupted,
        onSignal: () => worker.stop('stopped by signal'),
        drain: () => worker.ended,
      });
      process.exitCode = await worker.ended.finally(logs.close);
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
