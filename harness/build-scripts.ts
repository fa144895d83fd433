// Bundles the TypeScript k6 scripts into files real k6 and the embedded engine both run.
import { mkdir } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as esbuild from 'esbuild';
import { ERROR_CODES, PlateauError } from '../contract/index.ts';
import { build } from '../lib/esbuild-build.ts';

/** The project root (the folder holding `scripts/`). */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The scripts plateau ships, by name (`scripts/<name>.ts` → `dist/k6/<name>.js`). */
export const SCRIPT_NAMES = ['capacity', 'constant-rate', 'breakpoint', 'concurrency'] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/**
 * The syntax level every supported k6 accepts: k6 before v1 passes scripts through an old
 * Babel that rejects `??`, `?.` and object spread (ES2018+), while ES2017 keeps async/await
 * and ES modules. esbuild lowers anything newer (../shared/k6/README.md).
 */
export const K6_TARGET = 'es2017';

/** One bundle written by {@link buildK6Scripts}. */
export interface BuiltScript {
  name: string;
  /** Absolute path of the `.js` bundle. */
  outFile: string;
  bytes: number;
  /** Modules the bundle imports at run time: only `k6` and `k6/…`. */
  imports: string[];
  /**
   * Whether it bundles `plateau/k6` (scripts/lib/study.ts), whose options and tags follow the
   * study's -e settings: only such a script can be given steps (or a probe's) by plateau.
   */
  usesStudy: boolean;
}

/**
 * Bundles each entry (default: the shipped scripts) with esbuild into `outDir` as ESM,
 * with `k6` and `k6/*` left external. Fails when a bundle would import anything else
 * (an npm package left external, a Node built-in), because k6 cannot load it.
 */
export async function buildK6Scripts(
  options: { outDir?: string; entries?: string[] } = {},
): Promise<BuiltScript[]> {
  const outDir = resolve(options.outDir ?? join(PROJECT_ROOT, 'dist', 'k6'));
  const entries = options.entries ?? SCRIPT_NAMES.map((name) => join(PROJECT_ROOT, 'scripts', `${name}.ts`));
  await mkdir(outDir, { recursive: true });
  let result: esbuild.BuildResult<{ metafile: true; write: true }>;
  try {
    result = await build({
      entryPoints: entries,
      outdir: outDir,
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      target: K6_TARGET,
      external: ['k6', 'k6/*'],
      metafile: true,
      write: true,
      logLevel: 'silent',
      legalComments: 'none',
      banner: {
        js: "// Built by plateau from a k6 script (TypeScript or JavaScript). Runs on k6 v0.43+, v1, v2 and plateau's engine.",
      },
      plugins: [plateauHelper],
    });
  } catch (error) {
    const messages = (error as { errors?: esbuild.Message[] }).errors ?? [];
    const text = messages
      .map((m) => `${m.location?.file ?? ''}:${m.location?.line ?? ''} ${m.text}`)
      .join('\n');
    throw new PlateauError(ERROR_CODES.INPUT, `bundling the k6 scripts failed:\n${text || String(error)}`, {
      hint:
        'k6 scripts may import only k6, k6/* and relative files (Node built-ins do not exist in k6); ' +
        '`npm run typecheck` shows type errors too',
      cause: error,
    });
  }
  const built: BuiltScript[] = [];
  for (const [outFile, output] of Object.entries(result.metafile.outputs)) {
    const imports = output.imports.filter((i) => i.external).map((i) => i.path);
    const foreign = imports.filter((path) => !isK6Module(path));
    if (foreign.length > 0) {
      throw new PlateauError(
        ERROR_CODES.INPUT,
        `${basename(outFile)} imports ${foreign.join(', ')}, which k6 cannot load`,
        { hint: 'k6 scripts may import only k6 and k6/* modules; bundle other code or remove it' },
      );
    }
    const usesStudy = Object.keys(output.inputs).some((input) => resolve(input) === PLATEAU_HELPER);
    built.push({
      name: basename(outFile, '.js'),
      outFile: resolve(outFile),
      bytes: output.bytes,
      imports,
      usesStudy,
    });
  }
  return built.sort((a, b) => a.name.localeCompare(b.name));
}

/** Where your own scripts find `plateau/k6` (scripts/lib/study.ts), bundled into them. */
export const PLATEAU_HELPER = join(PROJECT_ROOT, 'scripts', 'lib', 'study.ts');

const plateauHelper: esbuild.Plugin = {
  name: 'plateau-helper',
  setup(build) {
    build.onResolve({ filter: /^plateau\/k6$/ }, () => ({ path: PLATEAU_HELPER }));
  },
};

/** Whether `specifier` is one of k6's built-in modules. */
export function isK6Module(specifier: string): boolean {
  return specifier === 'k6' || specifier.startsWith('k6/');
}

/** Whether `specifier` names a Node built-in (`fs`, `node:fs`, `fs/promises`). */
export function isNodeBuiltin(specifier: string): boolean {
  const bare = specifier.replace(/^node:/, '');
  return (
    specifier.startsWith('node:') ||
    builtinModules.includes(bare) ||
    builtinModules.includes(bare.split('/')[0]!)
  );
}
