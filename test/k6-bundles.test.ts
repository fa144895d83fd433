// The bundles of scripts/*.ts are files real k6 can load: ESM importing only k6 modules.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'acorn';
import {
  buildK6Scripts,
  isK6Module,
  isNodeBuiltin,
  K6_TARGET,
  SCRIPT_NAMES,
} from '../harness/build-scripts.ts';

/**
 * k6 before v1 compiles scripts with an old Babel that rejects syntax newer than ES2017
 * (`??`, `?.`, object spread). A parser held to ES2017 rejects the same, so a bundle it
 * parses loads on every supported k6; the real-k6 suite checks that on k6 itself.
 */
function assertEs2017(code: string, name: string): void {
  try {
    parse(code, { ecmaVersion: 2017, sourceType: 'module' });
  } catch (error) {
    assert.fail(`${name} has syntax newer than ES2017: ${(error as Error).message}`);
  }
}

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
      assertEs2017(code, script.name);
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

test('the ES2017 check itself rejects what old k6 rejects', () => {
  assert.equal(K6_TARGET, 'es2017');
  for (const modern of ['a ?? b;', 'a?.b;', 'const x = { ...y };', 'for await (const x of y) {}']) {
    assert.throws(() => assertEs2017(`${modern}\n`, 'probe'), /newer than ES2017/, modern);
  }
  assertEs2017('export default async function () { await x; }\n', 'async/await is ES2017');
});

test("a user's script in modern TypeScript is lowered to ES2017 when plateau bundles it", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-user-script-'));
  try {
    const entry = join(dir, 'mine.ts');
    await (await import('node:fs/promises')).writeFile(
      entry,
      [
        "import http from 'k6/http';",
        'type Cfg = { base?: string; tags?: Record<string, string> };',
        'const cfg: Cfg = { ...{ tags: { a: "1" } }, base: __ENV.BASE_URL };',
        'export const options = { vus: 1, iterations: 1 };',
        'export default async function () {',
        '  const url = cfg.base ?? "http://127.0.0.1:1";',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the script's own template literal
        '  const res = await http.asyncRequest("GET", `${url}/`, null, { tags: cfg?.tags });',
        '  return res?.status;',
        '}',
        '',
      ].join('\n'),
    );
    const [built] = await buildK6Scripts({ outDir: join(dir, 'out'), entries: [entry] });
    const code = await readFile(built!.outFile, 'utf8');
    assertEs2017(code, 'mine');
    assert.match(code, /asyncRequest/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
