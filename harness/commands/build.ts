// `plateau build`: bundle the TypeScript k6 scripts for k6 and the embedded engine.
import { relative } from 'node:path';
import type { Command } from 'commander';
import { buildK6Scripts } from '../build-scripts.ts';

export function registerBuild(program: Command): void {
  program
    .command('build')
    .summary('bundle scripts/*.ts into dist/k6/*.js (also: npm run build:k6)')
    .description(
      `Bundles the TypeScript k6 scripts with esbuild: ESM, ES2017 (what every k6 from v0.43 to v2 loads), k6 and k6/* left external,
no Node built-ins. The bundles run unchanged on real k6 (v0.43 and later) and on plateau's engine.`,
    )
    .option('-o, --out-dir <dir>', 'where to write the bundles', 'dist/k6')
    .addHelpText(
      'after',
      `
Examples:
  plateau build
  k6 run -e STEPS=20,40 dist/k6/capacity.js --out csv=run.csv --summary-export=summary.json`,
    )
    .action(async (options: { outDir: string }) => {
      const built = await buildK6Scripts({ outDir: options.outDir });
      for (const script of built) {
        process.stdout.write(
          `${relative(process.cwd(), script.outFile)}  ${(script.bytes / 1024).toFixed(1)} KiB\n`,
        );
      }
    });
}
