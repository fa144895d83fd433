// The `plateau` command line: one file per subcommand, wired here.
import { Command, CommanderError } from 'commander';
import { EXIT_CODES, isPlateauError } from '../contract/index.ts';
import { PLATEAU_VERSION } from '../lib/version.ts';
import { registerAnalyze } from './commands/analyze.ts';
import { registerBuild } from './commands/build.ts';
import { registerCheck } from './commands/check.ts';
import { registerCompare } from './commands/compare.ts';
import { registerConfirm } from './commands/confirm.ts';
import { registerDb } from './commands/db.ts';
import { registerEngine } from './commands/engine.ts';
import { registerInit } from './commands/init.ts';
import { registerReport } from './commands/report.ts';
import { registerRun } from './commands/run.ts';
import { registerServe } from './commands/serve.ts';
import { registerTestRun } from './commands/testrun.ts';
import { shutdown } from './lifecycle.ts';

/** Builds the program; exported so tests can run commands in-process. */
export function buildProgram(): Command {
  const program = new Command('plateau')
    .description(
      'Stepped capacity testing: find which resource limits a service first,\nat what served rate, and what happens past it.',
    )
    .version(PLATEAU_VERSION, '-V, --version', "print plateau's version")
    .showHelpAfterError('(run with --help for usage)')
    // Descriptions are written with line breaks for the source; commander wraps them again
    // to the terminal, so paragraphs are joined first (inherited by every subcommand).
    .configureHelp({ commandDescription: (cmd) => reflow(cmd.description()) })
    .exitOverride();
  registerInit(program);
  registerRun(program);
  registerServe(program);
  registerDb(program);
  registerBuild(program);
  registerEngine(program);
  registerAnalyze(program);
  registerConfirm(program);
  registerCompare(program);
  registerReport(program);
  registerCheck(program);
  registerTestRun(program);
  return program;
}

/**
 * Joins the lines of each paragraph of `text` into one, for the terminal to wrap.
 * Paragraphs are separated by blank lines; one with indented or `-` lines (a list, an
 * example) keeps its lines.
 */
export function reflow(text: string): string {
  return text
    .split(/\n[ \t]*\n/)
    .map((paragraph) => {
      const lines = paragraph.split('\n');
      return lines.some((line) => /^(\s|-\s)/.test(line)) ? paragraph : lines.join(' ');
    })
    .join('\n\n');
}

/** Runs the CLI with `argv` (as process.argv) and exits with the right status on error. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    process.exitCode = await report(error);
    await shutdown();
  }
}

async function report(error: unknown): Promise<number> {
  if (error instanceof CommanderError) {
    // Commander already printed its message (or the help, with exit code 0).
    return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.invalidConfig;
  }
  if (isPlateauError(error)) {
    process.stderr.write(`plateau: ${error.message}\n`);
    if (error.hint) process.stderr.write(`hint: ${error.hint}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`plateau: unexpected error (please report it): ${message}\n`);
  return EXIT_CODES.failure;
}
