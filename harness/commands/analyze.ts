// `plateau analyze`: recompute the analysis of a run directory, or analyse any k6 output file.
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { analyzePath } from '../../analysis/analyze-run.ts';
import { CRITERIA_FLAGS, DEFAULT_CRITERIA, parseCriteria } from '../../analysis/verdict.ts';
import type { VerdictCriteria } from '../../contract/index.ts';
import { settleRunDir } from '../study/run-dir.ts';

/** commander's option key for each criterion flag (--pool-saturated → poolSaturated). */
const optionKey = (flag: string) => flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

export function registerAnalyze(program: Command): void {
  program
    .command('analyze')
    .argument(
      '<path...>',
      'a run directory (runs/<id>/) or a k6 CSV/NDJSON file (.gz ok); several files = the instances of one segmented test',
    )
    .summary('build the saturation table, verdict and capacity record from a run')
    .description(
      `Reads a run directory (run.json, k6.csv.gz, server.json) and writes analysis.json,
record.txt, table.md and report.html next to them; prints the table and the record. Given a bare k6
output file from any k6 run, it analyses the client side alone: per step when requests
carry a 'step' tag, otherwise per scenario and time window. Several files are the
outputs of the instances of one test that was split with --execution-segment: they
are analysed together as one client side.`,
    )
    .option('--json', 'print analysis.json (with a runDir field) to stdout and nothing else')
    .option(
      '--jittered-run <dir>',
      'a jittered run (plateau run --jitter S) of the same configuration: the record quotes its safe limit, as real arrivals cluster',
    )
    .option(
      '--steady',
      "leave each step's ramp seconds out of its rates (default: whole holds, as the k6 step tags)",
    )
    .option(
      `${CRITERIA_FLAGS.followingShare.flag} <share>`,
      `the plateau is the first step whose served rate falls below this share of what the client sent (default ${DEFAULT_CRITERIA.followingShare})`,
    )
    .option(
      `${CRITERIA_FLAGS.poolSaturatedPct.flag} <pct>`,
      `a pool is saturated from this % checked out (default ${DEFAULT_CRITERIA.poolSaturatedPct})`,
    )
    .option(
      `${CRITERIA_FLAGS.cpuSaturatedPct.flag} <pct>`,
      `a process is CPU-bound from this % of one core (default ${DEFAULT_CRITERIA.cpuSaturatedPct}; above 100 for several cores)`,
    )
    .option(
      `${CRITERIA_FLAGS.loopSaturated.flag} <utilisation>`,
      `an event loop is saturated from this utilisation, 0..1 (default ${DEFAULT_CRITERIA.loopSaturated})`,
    )
    .option(
      `${CRITERIA_FLAGS.queryRise.flag} <times>`,
      `query time has risen when its p95 reaches this multiple of the first step's (default ${DEFAULT_CRITERIA.queryRise})`,
    )
    .addHelpText(
      'after',
      '\nExamples:\n  plateau analyze runs/20261201-101500-ab12\n  plateau analyze results.csv.gz --json | jq .verdict\n  plateau analyze part1.csv.gz part2.csv.gz   # two instances, segments 0:1/2 and 1/2:1\n  plateau analyze runs/20261201-101500-ab12 --pool-saturated 95   # judge a pool meant to run hot\n  plateau analyze runs/<even> --jittered-run runs/<jittered>       # quote the jittered safe limit\n\nThe criteria flags re-judge a run; the record notes any that differ from the defaults,\nand analysis.json keeps the criteria used.',
    )
    .action(
      async (
        paths: string[],
        options: { json?: boolean; steady?: boolean; jitteredRun?: string } & Record<string, unknown>,
      ) => {
        const raw: Partial<Record<keyof VerdictCriteria, string>> = {};
        for (const [key, { flag }] of Object.entries(CRITERIA_FLAGS)) {
          const value = options[optionKey(flag)];
          if (typeof value === 'string') raw[key as keyof VerdictCriteria] = value;
        }
        // A run directory a study is still writing is refused; one whose study's plateau
        // was killed (its lock stale) is marked failed in run.json first.
        if (paths.length === 1 && (await stat(paths[0]!).catch(() => undefined))?.isDirectory()) {
          const settled = await settleRunDir(paths[0]!);
          if (settled) process.stderr.write(`plateau: ${paths[0]}: ${settled}\n`);
        }
        const output = await analyzePath(paths, {
          steady: options.steady === true,
          criteria: parseCriteria(raw),
          ...(options.jitteredRun ? { jitteredRun: options.jitteredRun } : {}),
        });
        if (options.json) {
          process.stdout.write(`${JSON.stringify({ ...output.analysis, runDir: output.runDir }, null, 2)}\n`);
          return;
        }
        process.stdout.write(`${output.tableText}\n${output.record}`);
        if (output.runDir)
          process.stdout.write(
            `\nwrote analysis.json, record.txt, table.md, report.html in ${output.runDir}\n`,
          );
      },
    );
}
