// `plateau report`: report.html for a run directory, or a comparison report for two.
import { relative } from 'node:path';
import type { Command } from 'commander';
import { writeReport } from '../../analysis/write-report.ts';

export function registerReport(program: Command): void {
  program
    .command('report')
    .argument('<run-dir>', 'a run directory (runs/<id>/)')
    .argument('[run-dir-b]', 'a second run directory: compare it with the first (A and B overlaid)')
    .summary('write report.html: charts, saturation table and capacity record in one self-contained page')
    .description(
      `Writes report.html into the run directory: the verdict, per-second charts of the load,
latency, pool, CPU and generator with each step shaded, the saturation table with the
saturated cells marked, and the capacity record. One file that opens from disk with no
network (the chart library is inlined), in light and dark mode, and printable.

With two run directories it writes a comparison (A = the first, B = the second, overlaid,
with how far the plateau moved) into the second one, where plateau confirm writes its
comparison too. --out writes it elsewhere. run, confirm, check and analyze write the
report themselves; this command remakes it.`,
    )
    .option('--out <file>', 'write the page here instead of into the (second) run directory')
    .addHelpText(
      'after',
      '\nExamples:\n  plateau report runs/20261201-101500-ab12\n  plateau report runs/20261201-101500-ab12 runs/20261201-103000-cd34   # comparison, into the second\n  plateau report runs/<a> runs/<b> --out pool-4-vs-8.html',
    )
    .action(async (a: string, b: string | undefined, options: { out?: string }) => {
      const path = await writeReport(b === undefined ? [a] : [a, b], options.out);
      process.stdout.write(`${relative(process.cwd(), path) || path}\n`);
    });
}
