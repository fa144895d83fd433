// `plateau confirm`: rerun a study changing only the suspect resource, and compare.
import { join, relative } from 'node:path';
import type { Command } from 'commander';
import { compareRuns, renderComparison } from '../../analysis/compare.ts';
import { readRun } from '../../analysis/read-run.ts';
import { renderRecord } from '../../analysis/render.ts';
import { loadTemplates } from '../../analysis/templates.ts';
import { writeReport } from '../../analysis/write-report.ts';
import { ERROR_CODES, EXIT_CODES, PlateauError, type RunManifest } from '../../contract/index.ts';
import { writeFileAtomic } from '../../lib/atomic-write.ts';
import { formatDuration } from '../../scripts/lib/settings.ts';
import { setSignalPolicy } from '../lifecycle.ts';
import { stderrReporter } from '../study/progress-reporter.ts';
import { addRequestOptions, requestFlags } from '../study/request-options.ts';
import { serviceBlockFromRecord } from '../study/service-process.ts';
import { runStudy } from '../study/study.ts';
import { planStudy, type RunFlags } from '../study/study-options.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * The flags that reproduce a run from its manifest, with `overrides` on top. A service plateau
 * started (`serviceProcess`) is started again, with `overrides.set` over its env, and with the
 * database it had: a new embedded one, or DATABASE_URL from `env` for one given by URL (whose
 * URL run.json never holds). Throws a PlateauError for a `--set` on a target plateau did not
 * start, and for a URL database with no DATABASE_URL.
 */
export function flagsFromManifest(
  manifest: RunManifest,
  overrides: RunFlags,
  env: Record<string, string | undefined> = process.env,
): RunFlags {
  const load = manifest.load;
  const closed = load.model === 'closed';
  const model: RunFlags = closed
    ? {
        model: 'closed',
        vus: (load.vusLevels ?? []).join(','),
        retries: String(load.retries ?? 0),
        recoveryVus: String(load.recoveryVus ?? 0),
      }
    : {
        steps: load.stepsPerSec.join(','),
        ramp: String(load.rampSeconds),
        recoveryRate: String(load.recoveryRatePerSec),
        jitter: String(load.jitterSeconds),
      };
  const inherited: RunFlags = {
    ...model,
    hold: String(load.holdSeconds),
    recovery: String(load.recoverySeconds),
    ...(load.timeoutSeconds !== undefined ? { timeout: formatDuration(load.timeoutSeconds) } : {}),
    p95Ms: String(load.p95Ms),
    failRate: String(load.failRate),
    engine: manifest.engine.name,
    ...(manifest.engine.workers !== undefined ? { workers: String(manifest.engine.workers) } : {}),
    script: load.script,
    ...requestFlags(manifest.request),
  };
  const service: Record<string, string> = {};
  for (const [key, value] of Object.entries(manifest.service ?? {})) {
    service[key] = typeof value === 'boolean' ? (value ? 'on' : 'off') : String(value);
  }
  for (const entry of overrides.set ?? []) {
    const eq = entry.indexOf('=');
    service[eq < 0 ? entry : entry.slice(0, eq)] = eq < 0 ? '' : entry.slice(eq + 1);
  }
  const merged: RunFlags = { ...inherited };
  for (const [key, value] of Object.entries(overrides) as [keyof RunFlags, unknown][]) {
    if (value !== undefined && key !== 'set') (merged as Record<string, unknown>)[key] = value;
  }
  if (manifest.serviceProcess) {
    merged.serviceProcess = serviceBlockFromRecord(manifest.serviceProcess);
    if (overrides.set !== undefined) merged.set = overrides.set;
    merged.target ??= manifest.target;
    if (manifest.database?.kind === 'embedded') merged.db ??= 'embedded';
    else if (manifest.database) {
      merged.db ??= env.DATABASE_URL;
      if (merged.db === undefined)
        throw PlateauError.invalidConfig(
          [
            {
              setting: 'DATABASE_URL',
              message: `is not set, and ${manifest.id} ran its service on a database given by URL, which run.json does not record`,
              hint: 'set DATABASE_URL to that database and confirm again',
            },
          ],
          'confirm',
        );
    }
  } else if (manifest.service) merged.set = Object.entries(service).map(([k, v]) => `${k}=${v}`);
  else {
    if ((overrides.set ?? []).length > 0)
      throw PlateauError.invalidConfig(
        [
          {
            setting: '--set',
            message: `plateau did not start the service at ${manifest.target}, so it cannot change its settings`,
            hint: 'declare it in plateau.config as service: { command, env, ready }, study it with plateau run, then confirm that run with --set',
          },
        ],
        'confirm',
      );
    merged.target ??= manifest.target;
  }
  return merged;
}

export function registerConfirm(program: Command): void {
  const confirm = program
    .command('confirm')
    .argument('<run-dir>', 'the run whose first limit to confirm')
    .summary('rerun a study changing only the suspect resource, and compare')
    .description(
      `Reruns the study with every setting taken from <run-dir>'s manifest except what you
change (usually one --set), compares the two runs and writes the "confirmed by" line into
the new run's record. A limit is confirmed when changing it alone moved the plateau.

When plateau started your service for <run-dir> (plateau.config's service:), it starts it
again with --set over its env (a key its env did not have is added, and said so). It
cannot change a service it did not start: declare the service to confirm on it.`,
    )
    .option(
      '--set <KEY=VALUE>',
      'the change, e.g. POOL_MAX=8: a reference-service setting, or an env setting of the service plateau started (repeatable, but change one thing)',
      collect,
      [],
    )
    .option('--steps <rates>', 'new steps (a higher ceiling needs higher steps)')
    .option('--hold <s>', 'seconds per step')
    .option('--ramp <s>', 'ramp at the start of each hold')
    .option('--out <dir>', 'where run directories go', 'runs')
    .option('--json', 'print the comparison as JSON')
    .option('-q, --quiet', 'no progress on stderr')
    .addHelpText(
      'after',
      '\nExample:\n  plateau confirm runs/20261201-101500-ab12 --set POOL_MAX=8 --steps 40,80,120,160',
    )
    .action(async (runDir: string, flags: RunFlags) => {
      const before = await readRun(runDir);
      if (!before.manifest) {
        throw new PlateauError(ERROR_CODES.INPUT, `${runDir} has no run.json to rerun from`, {
          hint: 'confirm needs a run directory written by plateau run',
        });
      }
      const plan = planStudy(flagsFromManifest(before.manifest, flags));
      for (const [key, value] of Object.entries(plan.sources)) {
        const given =
          key === '--steps'
            ? flags.steps
            : key === '--hold'
              ? flags.hold
              : key === '--ramp'
                ? flags.ramp
                : undefined;
        if (given === undefined && !(flags.set ?? []).some((s) => s.startsWith(`${key}=`)))
          value.source = 'manifest';
      }
      for (const value of Object.values(plan.serviceProcess?.env ?? {}))
        if (value.source === 'config') value.source = 'manifest';
      const stop = new AbortController();
      let finished: Promise<unknown> = Promise.resolve();
      setSignalPolicy({
        exitCode: () => EXIT_CODES.interrupted,
        onSignal: () => stop.abort(),
        drain: () => finished,
      });
      const reporter = stderrReporter(plan.quiet === true);
      const running = runStudy(plan, { signal: stop.signal, onProgress: (p) => reporter.report(p) });
      // The drain on a signal waits for all of this, printing included: the process exits
      // as soon as it ends, and an await between the study and the output would lose it.
      finished = (async () => {
        const result = await running.finally(() => reporter.finish());
        // A rerun that did not complete is not compared: say what ended it.
        if (result.failure) throw result.failure;
        if (!result.output) return;
        const comparison = compareRuns(before, {
          analysis: result.output.analysis,
          manifest: result.manifest,
        });
        const record = renderRecord(
          await loadTemplates(),
          result.output.analysis,
          result.manifest,
          comparison.confirmedBy ?? undefined,
        );
        await writeFileAtomic(join(result.runDir, 'record.txt'), record);
        await writeFileAtomic(
          join(result.runDir, 'comparison.json'),
          `${JSON.stringify({ runA: before.dir, runB: result.runDir, ...comparison }, null, 2)}\n`,
        );
        // The new run's report.html becomes the comparison: A and B overlaid.
        await writeReport([before.dir, result.runDir]);
        if (plan.json) {
          process.stdout.write(`${JSON.stringify({ ...comparison, runDir: result.runDir }, null, 2)}\n`);
        } else {
          process.stdout.write(
            `${result.output.tableText}\n${record}\n${renderComparison(comparison)}\nrun directory: ${relative(process.cwd(), result.runDir)}\n`,
          );
        }
        process.exitCode = result.exitCode;
      })();
      await finished;
    });
  addRequestOptions(confirm);
}
