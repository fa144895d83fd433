// `plateau compare`: two runs side by side, and whether one change moved the plateau.
import type { Command } from 'commander';
import { compareRuns, renderComparison } from '../../analysis/compare.ts';
import { readRun } from '../../analysis/read-run.ts';

export function registerCompare(program: Command): void {
  program
    .command('compare')
    .argument('<run-a>', 'the first run directory')
    .argument('<run-b>', 'the run to compare with it')
    .summary('compare two runs: changed settings, tables side by side, plateau ratio')
    .description(
      `Names the settings that differ between the two manifests, puts the tables side by side,
and gives the plateau ratio and whether the first limit stayed the same resource. A limit is
confirmed only when changing that resource alone moved the plateau.`,
    )
    .option('--json', 'print the comparison as JSON')
    .addHelpText('after', '\nExample:\n  plateau compare runs/20261201-101500-ab12 runs/20261201-103000-cd34')
    .action(async (a: string, b: string, options: { json?: boolean }) => {
      const comparison = compareRuns(await readRun(a), await readRun(b));
      process.stdout.write(
        options.json ? `${JSON.stringify(comparison, null, 2)}\n` : renderComparison(comparison),
      );
    });
}
