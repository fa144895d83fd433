// `plateau run`: the main job, a capacity study end to end.
import { relative } from 'node:path';
import { type Command, Option } from 'commander';
import { EXIT_CODES } from '../../contract/index.ts';
import { CONFIG_NAMES, markConfigSources, withConfigFile } from '../config-file.ts';
import { setSignalPolicy } from '../lifecycle.ts';
import { stderrReporter } from '../study/progress-reporter.ts';
import { addRequestOptions } from '../study/request-options.ts';
import { runStudy } from '../study/study.ts';
import { planStudy, type RunFlags, SETTABLE_KEYS, STUDY_DEFAULTS } from '../study/study-options.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerRun(program: Command): void {
  const run = program
    .command('run')
    .summary('run a capacity study end to end (the main job; npm start)')
    .description(
      `Starts an embedded PostgreSQL and the reference statement service (or uses --target),
runs the stepped capacity ramp with the embedded engine (or k6), collects both sides into
runs/<id>/, and prints the saturation table and the capacity record.

With service: { command, env, cwd, ready, stop } in plateau.config, plateau starts your
service before the load (after the database, when --db makes it open one), waits until
ready (a log line or a URL's 2xx), keeps its output in service.log and stops it after;
--target is still the URL to load, and --set changes the service's env.

It exits 0 when the study produced a verdict, even though the upper steps crossed their
thresholds (finding that point is the purpose); non-zero only when the study could not be
carried out: 104 bad options or a run directory without room, 105 interrupted, 120 the
service died, 121 its database died, 122 the load generator died, 123 the disk filled,
1 anything else. However it ends, the run directory keeps what was collected, analysed, and
run.json says how it ended (docs/capacity-study.md).`,
    )
    .option(
      '--script <path>',
      "your own k6 script (.ts or .js) as the study; it imports 'plateau/k6' for the study's options and step tags (default: plateau's capacity ramp)",
    )
    .option(
      '-c, --config <file>',
      `settings from a file (JSON, YAML, or .ts/.js default-exporting an object), overridden by the flags; default: ${CONFIG_NAMES.join(', ')} in the working directory`,
    )
    .addOption(
      new Option(
        '--model <model>',
        'open: stepped arrival rates (the default); closed: stepped numbers of clients, each sending its next request when the last ends (--vus)',
      ).choices(['open', 'closed']),
    )
    .option(
      '--vus <levels>',
      `closed model: clients per level, held --hold s each (default ${STUDY_DEFAULTS.vusLevels.join(',')})`,
    )
    .option(
      '--timeout <duration>',
      `the client's deadline, each request's timeout, e.g. 250ms (default ${STUDY_DEFAULTS.timeoutSeconds}s open, ${STUDY_DEFAULTS.closedTimeoutSeconds}s closed); sent as X-Request-Timeout-Ms`,
    )
    .option(
      '--retries <n>',
      'closed model: retry a failed request up to n times, after its Retry-After or a jittered backoff (default 0)',
    )
    .option('--recovery-vus <n>', 'closed model: clients for --recovery s after the levels (default 0: none)')
    .option(
      '--steps <rates>',
      `target rates, requests/s, in run order; a lower rate after them repeats that step (default ${STUDY_DEFAULTS.steps.join(',')}; found by a probe for your own service)`,
    )
    .option(
      '--find',
      'a probe places the steps: the rate doubles from 2/s until the first sign of the knee, then steps go coarse below it, fine across it and two past it (the default for your own service given no --steps)',
    )
    .option(
      '--budget <duration>',
      `the time --find's probe and study may take together, e.g. 5m, 90s (default ${STUDY_DEFAULTS.budgetSeconds / 60}m; at least 1m)`,
    )
    .option(
      '--repeat-decisive',
      'run the decisive steps (the last below the plateau, the plateau) again later in the study, to show whether they hold (the default with --find; with --steps a probe chooses them)',
    )
    .option('--no-repeat-decisive', 'run each step once, even with --find')
    .option('--hold <s>', `seconds per step (default ${STUDY_DEFAULTS.holdSeconds})`)
    .option('--ramp <s>', `ramp at the start of each hold (default ${STUDY_DEFAULTS.rampSeconds})`)
    .option('--recovery-rate <rate>', `rate after the ramp (default ${STUDY_DEFAULTS.recoveryRatePerSec})`)
    .option('--recovery <s>', `seconds at the recovery rate (default ${STUDY_DEFAULTS.recoverySeconds})`)
    .option('--jitter <s>', 'each arrival waits a random 0..s first (default 0: evenly spaced)')
    .option('--p95-ms <ms>', `latency objective (default ${STUDY_DEFAULTS.p95Ms})`)
    .option('--fail-rate <share>', `failure budget (default ${STUDY_DEFAULTS.failRate})`)
    .option(
      '--set <KEY=VALUE>',
      `reference-service setting, repeatable (${SETTABLE_KEYS.join(', ')}); with a service: in the config, any env setting of that service`,
      collect,
      [],
    )
    .option(
      '--target <url>',
      'your own service instead of the reference one (its GET /steps is used if it answers)',
    )
    .option('--allow-remote-target', 'allow a --target that is not a loopback address')
    .option(
      '--metrics <url>',
      "the service's Prometheus text endpoint, scraped once a second during the study; repeat it for each replica or component (e.g. http://127.0.0.1:8080/actuator/prometheus)",
      collect,
      [],
    )
    .option(
      '--prometheus <url>',
      "a Prometheus server's base URL: the service's series are read from it over the study's window after the load (the nightly case)",
    )
    .option(
      '--prometheus-match <matchers>',
      'label matchers that scope --prometheus to this service, e.g. \'{job="orders"}\'',
    )
    .option(
      '--no-postgres-activity',
      "do not read PostgreSQL's own views (pg_stat_activity, slots, its CPU) during the study",
    )
    .addOption(new Option('--engine <engine>', 'load engine').choices(['embedded', 'k6']).default(undefined))
    .option('--k6-bin <path>', 'the k6 binary for --engine k6 (default: K6_BIN, then k6 on PATH)')
    .option(
      '--workers <count>',
      "run the embedded engine on this many processes, one per core, as one test, where one core would be the generator's limit (~10,000 requests/s each); auto: the cores less one for the service plateau starts (or a target on this machine) and one for its embedded database",
    )
    .option('--db <db>', "'embedded' (default) or a postgres:// URL (default: DATABASE_URL when set)")
    .option('--out <dir>', 'where run directories go', STUDY_DEFAULTS.out)
    .option('--quick', 'a ~30 s study (steps 20..100, 5 s holds) that still finds the plateau')
    .option('--json', 'print analysis.json plus runDir to stdout, nothing else')
    .option('-q, --quiet', 'no progress on stderr')
    .addHelpText(
      'after',
      `
Examples:
  plateau run --quick
  plateau run --set POOL_MAX=8 --steps 40,80,120,160
  plateau run --find --budget 3m --set POOL_MAX=2   # a probe places the steps, the decisive ones run twice
  plateau run --steps 20,40,60,70,80 --repeat-decisive
  plateau run --target http://127.0.0.1:8080 --steps 50,100,150 --hold 30
  plateau run --target http://127.0.0.1:8080 --budget 10m   # no --steps: a probe finds them
  plateau run --target http://127.0.0.1:8080 --endpoint /api/orders --method POST \\
    --body @order.json --header 'Content-Type: application/json' --expect-status 201
  plateau run --script tests/orders.ts --target http://127.0.0.1:8080 --steps 20,40,80
  plateau run --config orders.yaml --set POOL_MAX=8   # its service: starts with POOL_MAX=8
  plateau run --target http://127.0.0.1:8080/orders --steps 20,40,60,80,100 \\
    --metrics http://127.0.0.1:8080/actuator/prometheus   # a JVM service's HikariCP and executors
  plateau run --target http://orders.test:8080 --allow-remote-target \\
    --prometheus http://127.0.0.1:9090 --prometheus-match '{job="orders"}'
  plateau run --engine k6 --k6-bin /usr/local/bin/k6
  plateau run --target http://10.0.0.5:8080 --allow-remote-target --workers auto   # rates past one core's
  plateau run --model closed --vus 4,8,16,24 --timeout 250ms --retries 2 --recovery-vus 4 \
    --set SHED=off --set POOL_MAX=2   # the congestion collapse (docs/overload.md)`,
    )
    .action(async (given: RunFlags & { config?: string }, command: Command) => {
      const { flags, path, fromConfig } = await withConfigFile(given, command);
      const plan = planStudy(flags, process.env, path ? { configFile: path } : {});
      markConfigSources(plan.sources, fromConfig, flags);
      if (path) plan.sources['--config'] = { value: path, source: given.config ? 'flag' : 'default' };
      const stop = new AbortController();
      let finished: Promise<unknown> = Promise.resolve();
      // On a signal the study stops the load, collects the server side, stops its service
      // and database, marks the run interrupted and analyses it; then the process exits 105.
      setSignalPolicy({
        // The study's own ending decides, once it is known (a signal while a run that had
        // failed was being analysed does not make it 'interrupted').
        exitCode: () => (typeof process.exitCode === 'number' ? process.exitCode : EXIT_CODES.interrupted),
        onSignal: (signal) => stop.abort(signal),
        drain: () => finished,
      });
      // Progress goes to stderr only: with --json, stdout carries the JSON alone.
      const reporter = stderrReporter(plan.quiet === true);
      const running = runStudy(plan, { signal: stop.signal, onProgress: (p) => reporter.report(p) });
      // The drain on a signal waits for all of this, printing included: the process exits
      // as soon as it ends, and an await between the study and the output would lose it.
      finished = (async () => {
        const result = await running.finally(() => reporter.finish());
        const where = relative(process.cwd(), result.runDir) || result.runDir;
        if (plan.json) {
          process.stdout.write(
            `${JSON.stringify({ ...result.output?.analysis, runDir: result.runDir }, null, 2)}\n`,
          );
        } else if (result.output) {
          process.stdout.write(
            `${result.output.tableText}\n${result.output.record}\nrun directory: ${where}\n`,
          );
        }
        if (result.rerunFrom.length > 0 && !plan.quiet) {
          process.stderr.write(
            `this is a rerun with more VUs of ${result.rerunFrom.join(', ')} (kept beside it; its rows with drops were not evidence)\n`,
          );
        }
        if (result.manifest.status === 'interrupted') {
          process.stderr.write(`interrupted: partial run kept in ${where} (plateau analyze ${where})\n`);
        }
        if (result.failure) {
          // What ended the study, after the table and record of what it collected.
          process.stderr.write(`plateau: ${result.failure.message}\n`);
          if (result.failure.hint) process.stderr.write(`hint: ${result.failure.hint}\n`);
        }
        process.exitCode = result.exitCode;
      })();
      // Were the study ever to wait for something that can no longer happen, Node would empty
      // its event loop and exit without a word (it did, when its PostgreSQL died): say so.
      const silent = () => {
        process.stderr.write(
          'plateau: the study stopped waiting for something that can no longer happen (a bug in plateau: please report it); run.json still says running, and plateau analyze <run directory> analyses what was collected\n',
        );
        process.exitCode = EXIT_CODES.failure;
      };
      process.once('beforeExit', silent);
      await finished.finally(() => process.off('beforeExit', silent));
    });
  addRequestOptions(run);
}
