// --help reads well at any width: descriptions are reflowed into paragraphs before
// commander wraps them, and every command documents itself.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Command } from 'commander';
import { buildProgram, reflow } from './cli.ts';

test('reflow joins the lines of a paragraph and keeps lists, examples and blank lines', () => {
  assert.equal(reflow('one\ntwo\n\nthree\nfour'), 'one two\n\nthree four');
  assert.equal(
    reflow('Examples:\n  plateau run\n  plateau check'),
    'Examples:\n  plateau run\n  plateau check',
  );
  assert.equal(reflow('- a\n- b'), '- a\n- b');
});

test('every command has a description; none comes out cut mid-sentence at 80 columns', () => {
  const commands: Command[] = [];
  const walk = (command: Command) => {
    commands.push(command);
    for (const sub of command.commands) walk(sub);
  };
  walk(buildProgram());
  assert.ok(commands.length >= 12, `${commands.length} commands`);
  for (const command of commands) {
    assert.ok(command.description().length > 20, `${command.name()} describes itself`);
    const help = command.createHelp();
    help.helpWidth = 80;
    const text = help.formatHelp(command, help);
    const lines = text.split('\n');
    for (let i = 1; i < lines.length; i++) {
      // A one- or two-word line after a full one: a hard line break wrapped again.
      const short = lines[i]!.trim().split(/\s+/).length <= 2 && lines[i]!.trim() !== '';
      const afterFull = lines[i - 1]!.length > 70 && !/^\s/.test(lines[i]!);
      assert.ok(
        !(short && afterFull && !lines[i]!.endsWith('.')),
        `${command.name()}: "${lines[i]}" after "${lines[i - 1]}"`,
      );
    }
  }
});

test('--version prints the version from package.json and exits 0', async () => {
  const { readFile } = await import('node:fs/promises');
  const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
  let printed = '';
  const program = buildProgram().configureOutput({ writeOut: (text) => (printed += text) });
  await assert.rejects(
    program.parseAsync(['node', 'plateau', '--version']),
    (error: { exitCode?: number }) => {
      assert.equal(error.exitCode, 0);
      return true;
    },
  );
  assert.equal(printed.trim(), version);
});
