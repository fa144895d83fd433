// test-run: own-process
// (it looks for the esbuild service among this process's children)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { waitUntil } from '../test/helpers/wait-until.ts';
import { build } from './esbuild-build.ts';

/** This process's live children named `esbuild` (a zombie not yet reaped is gone). */
function esbuildServices(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (comm === 'esbuild' && Number(ppid) === process.pid && state !== 'Z') found.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

const source = (n: number) => ({
  stdin: { contents: `export const n: number = ${n};`, loader: 'ts' as const },
  write: false,
  format: 'esm' as const,
});

test('builds at once all finish, and the esbuild service is stopped once none has been in flight for a moment', async () => {
  const results = await Promise.all([1, 2, 3].map((n) => build(source(n))));
  for (const [i, result] of results.entries()) {
    assert.match(result.outputFiles![0]!.text, new RegExp(`n = ${i + 1}`));
  }
  await waitUntil(() => esbuildServices().length === 0, 'the esbuild service exiting after the last build');
});

test('a build after the service was stopped starts another and stops it again', async () => {
  const result = await build(source(4));
  assert.match(result.outputFiles![0]!.text, /n = 4/);
  await waitUntil(() => esbuildServices().length === 0, 'the esbuild service exiting after the build');
});
