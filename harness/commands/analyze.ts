// `plateau analyze`: recompute the analysis of a run directory, or analyse any k6 output file.
import type { Command } from 'commander';
import { analyzePath } from '../../analysis/analyze-run.ts';

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
record.txt and table.md next to them; prints the table and the record. Given a bare k6
output file from any k6 run, it analyses the client side alone: per step when requests
carry a 'step' tag, otherwise per scenario and time window. Several files are the
outputs of the instances of one test that was split with --execution-segment: they
are analysed together as one client side.`,
    )
    .option('--json', 'print analysis.json (with a runDir field) to stdout and nothing else')
    .option(
      '--steady',
      "leave each step's ramp seconds out of its rates (default: whole holds, as the k6 step tags)",
    )
    .addHelpText(
      'after',
      '\nExamples:\n  plateau analyze runs/20261201-101500-ab12\n  plateau analyze results.csv.gz --json | jq .verdict\n  plateau analyze part1.csv.gz part2.csv.gz   # two instances, segments 0:1/2 and 1/2:1',
    )
    .action(async (paths: string[], options: { json?: boolean; steady?: boolean }) => {
      const output = await analyzePath(paths, { steady: options.steady === true });
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ ...output.analysis, runDir: output.runDir }, null, 2)}\n`);
        return;
      }
      process.stdout.write(`${output.tableText}\n${output.record}`);
      if (output.runDir)
        process.stdout.write(`\nwrote analysis.json, record.txt, table.md in ${output.runDir}\n`);
    });
}
