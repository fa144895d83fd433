// The CI workflows in .github/workflows/ are meant to be copied: their triggers, runner and
// artifacts are checked here, and every `plateau` command their steps run is checked against
// the real CLI, so that renaming a flag breaks this test instead of someone's nightly job.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { buildProgram } from '../harness/cli.ts';

interface Step {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}

interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, { 'runs-on': string | string[]; steps: Step[] }>;
}

/** One `plateau …` command that a step's script runs, split into words. */
interface Invocation {
  workflow: string;
  step: string;
  words: string[];
}

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../${path}`, import.meta.url)), 'utf8');

const WORKFLOWS = {
  check: '.github/workflows/plateau-check.yml',
  nightly: '.github/workflows/plateau-nightly.yml',
} as const;

const workflows = Object.fromEntries(
  Object.entries(WORKFLOWS).map(([key, path]) => [key, parse(read(path)) as Workflow]),
) as Record<keyof typeof WORKFLOWS, Workflow>;

const steps = (workflow: Workflow) => Object.values(workflow.jobs).flatMap((job) => job.steps);

/**
 * The `plateau` commands in a shell script: `npx plateau …` or `node bin/plateau.js …`, with
 * backslash-continued lines joined, up to the end of the line or a shell operator (pipe,
 * redirection, `;`, `&&`, the `)` closing a `$(…)`, a comment). Quotes around a word are removed.
 */
export function plateauCommands(script: string): string[][] {
  const commands: string[][] = [];
  for (const line of script.replace(/\\\r?\n/g, ' ').split('\n')) {
    for (const match of line.matchAll(/(?:npx\s+plateau|node\s+bin\/plateau\.js)\s+([^|;&)<>#\n]*)/g)) {
      const words = match[1]!.match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
      commands.push(words.map((word) => word.replace(/^(["'])(.*)\1$/, '$2')));
    }
  }
  return commands;
}

/**
 * What is wrong with one invocation against the real program: a command (or subcommand) that
 * does not exist, or a flag that command does not have (`--flag`, `--flag=value`, `-f`).
 */
export function invocationProblems(program: Command, invocation: Invocation): string[] {
  const where = `${invocation.workflow}, step "${invocation.step}"`;
  const { words } = invocation;
  let command = program;
  let i = 0;
  // Descend through subcommands (`plateau engine run`) while the words name them.
  while (i < words.length && command.commands.length > 0 && !words[i]!.startsWith('-')) {
    const sub = command.commands.find((c) => c.name() === words[i] || c.aliases().includes(words[i]!));
    if (!sub) return [`${where}: plateau has no command "${words.slice(0, i + 1).join(' ')}"`];
    command = sub;
    i++;
  }
  if (command === program) return [`${where}: "plateau ${words.join(' ')}" names no command`];
  const path = `plateau ${words.slice(0, i).join(' ')}`;
  const problems: string[] = [];
  for (const word of words.slice(i)) {
    if (!word.startsWith('-') || word === '-' || word === '--') continue;
    const flag = word.startsWith('--') ? word.split('=')[0]! : word.slice(0, 2);
    const known =
      flag === '--help' || flag === '-h' || command.options.some((o) => o.long === flag || o.short === flag);
    if (!known) problems.push(`${where}: ${path} has no flag ${flag}`);
  }
  return problems;
}

const invocations: Invocation[] = Object.entries(WORKFLOWS).flatMap(([key, path]) =>
  steps(workflows[key as keyof typeof WORKFLOWS]).flatMap((step) =>
    plateauCommands(step.run ?? '').map((words) => ({
      workflow: path,
      step: step.name ?? step.id ?? step.run!.split('\n')[0]!,
      words,
    })),
  ),
);

/** The value of `flag` in an invocation (`--flag value` or `--flag=value`). */
const flagValue = (words: string[], flag: string): string | undefined => {
  const at = words.findIndex((w) => w === flag || w.startsWith(`${flag}=`));
  if (at < 0) return undefined;
  return words[at]!.includes('=') ? words[at]!.slice(flag.length + 1) : words[at + 1];
};

const find = (workflow: string, command: string) =>
  invocations.find((i) => i.workflow === workflow && i.words[0] === command);

test('the checker finds plateau commands across continued lines and refuses an unknown flag by name', () => {
  const script = 'set +e\nnpx plateau check --record=capacity/record \\\n  --junitt out.xml | tee log\n';
  const found = plateauCommands(script);
  assert.deepEqual(found, [['check', '--record=capacity/record', '--junitt', 'out.xml']]);
  const problems = invocationProblems(buildProgram(), { workflow: 'w.yml', step: 'Check', words: found[0]! });
  assert.deepEqual(problems, ['w.yml, step "Check": plateau check has no flag --junitt']);
  assert.deepEqual(
    invocationProblems(buildProgram(), { workflow: 'w.yml', step: 'S', words: ['chek', '--rate', '4'] }),
    ['w.yml, step "S": plateau has no command "chek"'],
  );
  assert.deepEqual(
    invocationProblems(buildProgram(), { workflow: 'w.yml', step: 'S', words: ['engine', 'run', '-q'] }),
    [],
    'subcommands and short flags are followed',
  );
});

test('every plateau command the workflows run exists, with every flag it uses', () => {
  const program = buildProgram();
  const commands = (path: string) => invocations.filter((i) => i.workflow === path).map((i) => i.words[0]);
  assert.deepEqual(commands(WORKFLOWS.check), ['build', 'check'], 'the check workflow runs these');
  assert.deepEqual(commands(WORKFLOWS.nightly), ['build', 'run', 'confirm', 'compare']);
  const problems = invocations.flatMap((invocation) => invocationProblems(program, invocation));
  assert.deepEqual(problems, []);
});

test('the check runs on pull requests, and the nightly on a schedule and by hand', () => {
  assert.ok('pull_request' in workflows.check.on);
  const schedule = workflows.nightly.on.schedule as { cron: string }[];
  assert.ok(Array.isArray(schedule) && schedule.every((s) => /^\S+( \S+){4}$/.test(s.cron)), 'a cron entry');
  assert.ok('workflow_dispatch' in workflows.nightly.on);
});

test("the nightly study runs on a dedicated self-hosted runner, not a GitHub-hosted one's neighbours", () => {
  for (const job of Object.values(workflows.nightly.jobs)) {
    const labels = ([] as string[]).concat(job['runs-on']);
    assert.ok(labels.includes('self-hosted'), `runs-on ${labels.join(', ')}`);
    assert.ok(labels.length > 1, 'a label of its own, so that no other job lands on it');
    for (const label of labels) assert.doesNotMatch(label, /^(ubuntu|windows|macos)-/);
  }
});

test('artifacts are uploaded even when a step failed: the run directories and the JUnit report', () => {
  for (const [key, path] of Object.entries(WORKFLOWS)) {
    const uploads = steps(workflows[key as keyof typeof WORKFLOWS]).filter((s) =>
      s.uses?.startsWith('actions/upload-artifact@'),
    );
    assert.ok(uploads.length > 0, `${path} uploads something`);
    for (const upload of uploads) assert.match(String(upload.if), /always\(\)/, `${path}: ${upload.name}`);
    assert.ok(
      uploads.some((u) => String(u.with?.path).replace(/\/$/, '') === 'runs'),
      `${path} uploads runs/`,
    );
  }
  const junit = flagValue(find(WORKFLOWS.check, 'check')!.words, '--junit');
  assert.ok(junit, 'the check writes JUnit');
  const uploaded = steps(workflows.check)
    .filter((s) => s.uses?.startsWith('actions/upload-artifact@'))
    .map((s) => s.with?.path);
  assert.ok(uploaded.includes(junit), `the JUnit file ${junit} is uploaded`);
});

test('a failed check says what its exit status means, 99 first', () => {
  const explain = steps(workflows.check).find((s) => /failure\(\)/.test(s.if ?? '') && s.run);
  assert.ok(explain, 'a step that runs only when the check failed');
  assert.match(explain.run!, /99\)[^\n]*regression/);
  assert.match(explain.run!, /104\)/);
  assert.match(explain.run!, /105\)/);
});

test('the record both workflows use is the one docs/ci.md names', () => {
  const record = flagValue(find(WORKFLOWS.check, 'check')!.words, '--record');
  assert.equal(record, 'capacity/record');
  const docs = read('docs/ci.md');
  assert.ok(docs.includes(`\`${record}/\``), `docs/ci.md names ${record}/`);
  const compare = find(WORKFLOWS.nightly, 'compare')!;
  assert.equal(compare.words[1], record, 'the nightly compares with the same record');
  for (const step of [...steps(workflows.check), ...steps(workflows.nightly)]) {
    for (const path of step.run?.match(/capacity\/[\w/.-]+/g) ?? []) {
      assert.ok(path.startsWith(`${record}`), `step "${step.name}" looks for the record at ${path}`);
    }
  }
});
