// `plateau check`: the CI gate at the recorded safe limit.
import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { type Command, Option } from 'commander';
import { type ConfigProblem, EXIT_CODES, PlateauError } from '../../contract/index.ts';
import { parseNumberText } from '../../lib/number-text.ts';
import { parseSeconds } from '../../scripts/lib/settings.ts';
import { parseServiceConfig } from '../../target-service/config.ts';
import { CONFIG_NAMES, withConfigFile } from '../config-file.ts';
import { setSignalPolicy } from '../lifecycle.ts';
import { type CheckPlan, readRecordedLimit, runCheck, writeJunit } from '../study/check.ts';
import { stderrReporter } from '../study/progress-reporter.ts';
import {
  addRequestOptions,
  planRequest,
  REQUEST_FLAG_KEYS,
  type RequestFlags,
  requestFlags,
} from '../study/request-options.ts';
import {
  isLoopbackUrl,
  planWorkers,
  reservedCores,
  SETTABLE_KEYS,
  studyScript,
} from '../study/study-options.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];

interface CheckFlags extends RequestFlags {
  record?: string;
  script?: string;
  rate?: string;
  duration?: string;
  p95Ms?: string;
  failRate?: string;
  set: string[];
  target?: string;
  allowRemoteTarget?: boolean;
  engine?: 'embedded' | 'k6';
  k6Bin?: string;
  workers?: string;
  db?: string;
  out: string;
  junit?: string;
  json?: boolean;
  quiet?: boolean;
}

export function registerCheck(program: Command): void {
  const check = program
    .command('check')
    .summary('CI gate: a constant-rate run at the recorded safe limit (exit 99 on a regression)')
    .description(
      `Runs scripts/constant-rate.ts at the safe limit read from a recorded study (--record) or
at --rate, for --duration, against the reference service (with the recorded run's settings)
or --target. Thresholds: p95 under the objective, failures under the budget, nothing dropped.
Exits 0 on pass and 99 when a threshold is crossed, as k6 does; 104 for bad options, 105
when interrupted, 1 when the check could not run.`,
    )
    .option(
      '--record <path>',
      'a run directory or its analysis.json: take the safe limit (and settings) from it',
    )
    .option('--rate <n>', 'check this rate instead, requests/s')
    .option(
      '-c, --config <file>',
      `settings from a file (its top level and its check: section), overridden by the flags; default: ${CONFIG_NAMES.join(', ')} in the working directory`,
    )
    .option(
      '--script <path>',
      "your own k6 script (.ts or .js), the one the study ran: its 'plateau/k6' options become the check's constant rate",
    )
    .option('--duration <s>', 'how long: seconds (30) or a duration (30s, 1m30s); default 30 s')
    .option('--p95-ms <ms>', "latency objective (default: the record's, else 250)")
    .option('--fail-rate <share>', "failure budget (default: the record's, else 0.01)")
    .option('--set <KEY=VALUE>', 'reference-service setting, repeatable', collect, [])
    .option('--target <url>', 'your own service instead of the reference one')
    .option('--allow-remote-target', 'allow a --target that is not a loopback address')
    .addOption(new Option('--engine <engine>', 'load engine').choices(['embedded', 'k6']).default('embedded'))
    .option('--k6-bin <path>', 'the k6 binary for --engine k6')
    .option(
      '--workers <count>',
      "run the embedded engine on this many processes, one per core, as one test: for a rate past what one core keeps up for the check's length (~5,000 requests/s for an hour); auto: the cores less one for the service plateau starts (or a target on this machine) and one for its embedded database",
    )
    .option('--db <db>', "'embedded' (default) or a postgres:// URL")
    .option('--out <dir>', "where the check's run directory goes", 'runs')
    .option('--junit <file>', 'write JUnit XML (one test case per threshold)')
    .option('--json', 'print the result as JSON')
    .option('-q, --quiet', 'no progress on stderr')
    .addHelpText(
      'after',
      "\nExamples:\n  plateau check --record runs/20261201-101500-ab12 --junit plateau.xml\n  plateau check --rate 40 --duration 20\n  plateau check --target http://127.0.0.1:8080 --rate 10000 --duration 1h --workers auto   # an hour past one core's rate",
    )
    .action(async (typed: CheckFlags & { config?: string }, command: Command) => {
      const { flags } = await withConfigFile(typed, command);
      const problems: ConfigProblem[] = [];
      if ((flags.record === undefined) === (flags.rate === undefined)) {
        problems.push({
          setting: '--record/--rate',
          message: 'give exactly one',
          hint: 'e.g. --record runs/<id> or --rate 40',
        });
      }
      const positive = (name: string, raw: string | undefined, integer: boolean): number | undefined => {
        if (raw === undefined) return undefined;
        const value = parseNumberText(raw, { integer });
        if (value === undefined || value <= 0) {
          problems.push({
            setting: name,
            message: `"${raw}" is not accepted`,
            hint: `use a positive ${integer ? 'whole ' : ''}number`,
          });
          return undefined;
        }
        return value;
      };
      const rate = positive('--rate', flags.rate, true);
      // Seconds, or a Go duration as the scripts take it (30s, 1m30s).
      const duration = flags.duration === undefined ? 30 : parseSeconds(flags.duration);
      if (duration === undefined || duration < 1) {
        problems.push({
          setting: '--duration',
          message: `"${flags.duration}" is not accepted`,
          hint: 'use seconds (30) or a duration (30s, 1m30s) of at least 1 s',
        });
      }
      const p95 = positive('--p95-ms', flags.p95Ms, false);
      const failRate = flags.failRate === undefined ? undefined : Number(flags.failRate);
      if (failRate !== undefined && !(failRate >= 0 && failRate <= 1)) {
        problems.push({
          setting: '--fail-rate',
          message: `"${flags.failRate}" is not a share`,
          hint: 'use 0..1, e.g. 0.01',
        });
      }
      const service: Record<string, string> = {};
      for (const entry of flags.set) {
        const eq = entry.indexOf('=');
        const key = entry.slice(0, eq);
        if (eq < 0 || !SETTABLE_KEYS.includes(key as (typeof SETTABLE_KEYS)[number])) {
          problems.push({
            setting: '--set',
            message: `"${entry}" is not KEY=VALUE with a known key`,
            hint: `keys: ${SETTABLE_KEYS.join(', ')}`,
          });
        } else service[key] = entry.slice(eq + 1);
      }
      problems.push(
        ...parseServiceConfig(service).problems.map((p) => ({ ...p, setting: `--set ${p.setting}` })),
      );
      if (flags.target !== undefined && !isLoopbackUrl(flags.target) && !flags.allowRemoteTarget) {
        problems.push({
          setting: '--target',
          message: `${flags.target} is not a loopback address`,
          hint: 'pass --allow-remote-target if the host can take it',
        });
      }
      const db = flags.db ?? process.env.DATABASE_URL ?? 'embedded';
      if (db !== 'embedded' && !/^postgres(ql)?:\/\//.test(db)) {
        problems.push({
          setting: '--db',
          message: 'is neither "embedded" nor a postgres:// URL',
          hint: 'e.g. --db postgres://user:pass@127.0.0.1:5432/app',
        });
      }
      if (flags.script !== undefined) studyScript(flags.script, problems);
      if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'options');

      const recorded = flags.record ? await readRecordedLimit(flags.record) : undefined;
      // Your own script (the flag's, else the recorded study's) runs in check mode.
      const given = flags.script ?? recorded?.script;
      const script = given === undefined ? 'constant-rate' : studyScript(given, problems);
      // The recorded study's request and target unless the flags say otherwise.
      const requestGiven = REQUEST_FLAG_KEYS.some((key) => flags[key] !== undefined);
      const { request, baseUrl } = planRequest(
        requestGiven ? flags : requestFlags(recorded?.request),
        flags.target ?? recorded?.target,
        problems,
        {},
      );
      const workers = planWorkers(
        flags.workers,
        flags.engine ?? 'embedded',
        { cores: availableParallelism(), reservedCores: reservedCores(baseUrl, db) },
        problems,
      );
      if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'options');
      const plan: CheckPlan = {
        ratePerSec: rate ?? recorded!.ratePerSec,
        durationSeconds: duration!,
        p95Ms: p95 ?? recorded?.p95Ms ?? 250,
        failRate: failRate ?? recorded?.failRate ?? 0.01,
        service: baseUrl ? {} : { ...(recorded?.service ?? {}), ...service },
        target: baseUrl,
        request,
        script,
        engine: flags.engine ?? 'embedded',
        k6Bin: flags.k6Bin ?? process.env.K6_BIN ?? 'k6',
        ...(workers !== undefined ? { workers } : {}),
        db,
        out: flags.out,
      };
      const stop = new AbortController();
      let finished: Promise<unknown> = Promise.resolve();
      setSignalPolicy({
        exitCode: () => EXIT_CODES.interrupted,
        onSignal: () => stop.abort(),
        drain: () => finished,
      });
      const reporter = stderrReporter(flags.quiet === true);
      const running = runCheck(plan, { signal: stop.signal, onProgress: (p) => reporter.report(p) });
      // The drain on a signal waits for all of this, printing included: the process exits
      // as soon as it ends, and an await between the study and the output would lose it.
      finished = (async () => {
        const result = await running.finally(() => reporter.finish());
        if (flags.junit) await writeJunit(flags.junit, result, plan.ratePerSec);
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ ...result, ratePerSec: plan.ratePerSec }, null, 2)}\n`);
        } else {
          for (const t of result.thresholds) {
            process.stdout.write(
              `${t.failed ? '✗' : '✓'} ${t.metric}: ${t.expression}${t.value === undefined ? '' : `  (${Math.round(t.value * 1000) / 1000})`}\n`,
            );
          }
          const verdict =
            result.exitCode === 0
              ? 'pass'
              : result.exitCode === EXIT_CODES.thresholdsFailed
                ? 'FAIL: a threshold was crossed'
                : 'interrupted';
          process.stdout.write(
            `check at ${plan.ratePerSec}/s for ${plan.durationSeconds} s: ${verdict}\nrun directory: ${relative(process.cwd(), result.runDir)}\n`,
          );
        }
        process.exitCode = result.exitCode;
      })();
      await finished;
    });
  addRequestOptions(check);
}
