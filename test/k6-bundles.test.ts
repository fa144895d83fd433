// The bundles of scripts/*.ts are files real k6 can load: ESM importing only k6 modules.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import * as esbuild from 'esbuild';
import { buildK6Scripts, isK6Module, isNodeBuiltin, SCRIPT_NAMES } from '../harness/build-scripts.ts';

test('every script bundles to ESM that imports only k6 modules, with no require( and no Node built-in', async () => {
  const outDir = await mkdtemp(join(tmpdir(), 'plateau-bundles-'));
  try {
    const built = await buildK6Scripts({ outDir });
    assert.deepEqual(built.map((b) => b.name).sort(), [...SCRIPT_NAMES].sort());
    for (const script of built) {
      const code = await readFile(script.outFile, 'utf8');
      // Read the bundle back independently of the build's metafile.
      const imports = [...code.matchAll(/^\s*import\s+(?:[^'"]*?\s+from\s+)?["']([^"']+)["']/gm)].map(
        (m) => m[1]!,
      );
      assert.ok(imports.length > 0, `${script.name} imports k6`);
      for (const specifier of imports) {
        assert.ok(isK6Module(specifier), `${script.name} imports ${specifier}`);
        assert.ok(!isNodeBuiltin(specifier), `${script.name} imports Node's ${specifier}`);
      }
      assert.doesNotMatch(code, /\brequire\(/, `${script.name} has no require(`);
      assert.doesNotMatch(code, /\bimport\(/, `${script.name} has no dynamic import`);
      assert.match(code, /export\s*\{[^}]*\boptions\b/, `${script.name} exports options`);
      assert.match(code, /export\s*\{[^}]*\bdefault\b/, `${script.name} exports a default function`);
      assert.match(code, /asyncRequest/, `${script.name} uses the async request form`);
      assert.doesNotMatch(
        code,
        /\bhttp\.(get|post|put|del|request)\(/,
        `${script.name} never blocks on http`,
      );
      // Syntax that k6's ES2020 runtime accepts: re-transform at es2020 must not need lowering.
      const lowered = await esbuild.transform(code, { format: 'esm', target: 'es2020', loader: 'js' });
      assert.ok(lowered.code.length > 0);
    }
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
});

test('a script that imports a Node built-in is refused with a clear message', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-bad-script-'));
  try {
    const entry = join(dir, 'bad.ts');
    await (await import('node:fs/promises')).writeFile(
      entry,
      "import fs from 'node:fs';\nexport default function () { fs.readFileSync('x'); }\n",
    );
    await assert.rejects(
      buildK6Scripts({ outDir: join(dir, 'out'), entries: [entry] }),
      (error: unknown) =>
        error instanceof Error &&
        /Could not resolve "node:fs"/.test(error.message) &&
        /only k6, k6\/\*/.test((error as { hint?: string }).hint ?? ''),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
