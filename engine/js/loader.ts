// Loads a k6 script (bundled .js or .ts) into Node with k6's modules bound to the engine.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';
import * as esbuild from 'esbuild';
import { ScriptError } from '../errors.ts';
import type { Logger, LogLevel } from './logger.ts';

/** A module object by k6 import path (`k6`, `k6/http`, …). */
export type ModuleTable = Record<string, Record<string, unknown>>;

/** The globals a script sees besides the modules, read through getters at call time. */
export interface ScriptGlobals {
  readonly env: Record<string, string>;
  readonly vu: number;
  readonly iter: number;
}

/** Where the loaded code finds its modules and globals. */
interface PlateauGlobal {
  modules: ModuleTable;
  globals: ScriptGlobals;
  console: Console;
  open: (path: string, mode?: string) => string | ArrayBuffer;
}

declare global {
  var __plateau: PlateauGlobal | undefined;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Bundles `scriptPath` with esbuild, resolving `k6` and `k6/*` to the engine's modules,
 * and `__ENV`, `__VU`, `__ITER` and `console` to the engine's globals; then imports it,
 * which runs the init context once. (k6 runs the init context once per VU, each in its
 * own runtime; here module state is shared by all VUs.) Returns the module's exports.
 *
 * Only one loaded script is live per process: loading another rebinds the globals.
 */
export async function loadScript(
  scriptPath: string,
  modules: ModuleTable,
  globals: ScriptGlobals,
  logger: Logger,
  /** Where the script's console goes (k6's --console-output); default `logger`. */
  consoleLogger: Logger = logger,
): Promise<Record<string, unknown>> {
  const absolute = resolve(scriptPath);
  let code: string;
  try {
    const result = await esbuild.build({
      entryPoints: [absolute],
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      target: 'es2022',
      write: false,
      logLevel: 'silent',
      define: {
        __ENV: 'globalThis.__plateau.globals.env',
        __VU: 'globalThis.__plateau.globals.vu',
        __ITER: 'globalThis.__plateau.globals.iter',
        console: 'globalThis.__plateau.console',
        open: 'globalThis.__plateau.open',
      },
      plugins: [k6Modules(modules)],
    });
    code = result.outputFiles[0]!.text;
  } catch (error) {
    const messages = (error as { errors?: esbuild.Message[] }).errors ?? [];
    const text = messages
      .map((m) =>
        m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ${m.text}` : m.text,
      )
      .join('\n');
    throw new ScriptError(`cannot load ${scriptPath}:\n${text || String(error)}`, { cause: error });
  }

  const init = { running: true };
  globalThis.__plateau = {
    modules,
    globals,
    console: scriptConsole(consoleLogger),
    open: initOpen(dirname(absolute), init),
  };
  const dir = await mkdtemp(join(tmpdir(), 'plateau-script-'));
  const file = join(dir, 'script.mjs');
  try {
    await writeFile(file, code);
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new ScriptError(`the init context of ${scriptPath} threw: ${describe(error)}`, { cause: error });
  } finally {
    init.running = false;
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * k6's `open(path, mode)`: a file's text, or its bytes as an ArrayBuffer with mode "b".
 * A relative path is relative to the script. Only in the init context, as in k6.
 */
function initOpen(scriptDir: string, init: { running: boolean }) {
  return (path: string, mode?: string): string | ArrayBuffer => {
    if (!init.running) {
      throw new Error('open() can only be called in the init context (at the top level of the script)');
    }
    const file = resolve(scriptDir, String(path));
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (error) {
      throw new Error(
        `open ${String(path)}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : describe(error)} (looked for ${file})`,
      );
    }
    if (mode === 'b')
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    return bytes.toString('utf8');
  };
}

function k6Modules(modules: ModuleTable): esbuild.Plugin {
  return {
    name: 'plateau-k6-modules',
    setup(build) {
      build.onResolve({ filter: /^k6(\/.*)?$/ }, (args) => ({ path: args.path, namespace: 'k6' }));
      build.onLoad({ filter: /.*/, namespace: 'k6' }, (args) => {
        const module = modules[args.path];
        if (!module) {
          return {
            errors: [
              {
                text: `${args.path} is not available in plateau's embedded engine (it has ${Object.keys(modules).join(', ')}); run this script with real k6 (--engine k6)`,
              },
            ],
          };
        }
        const names = Object.keys(module).filter((name) => name !== 'default' && IDENTIFIER.test(name));
        const source = [
          `const m = globalThis.__plateau.modules[${JSON.stringify(args.path)}];`,
          'export default m.default;',
          ...names.map((name) => `export const ${name} = m.${name};`),
        ].join('\n');
        return { contents: source, loader: 'js' };
      });
    },
  };
}

/** console for scripts: k6 logs console output on stderr with `source=console`. */
function scriptConsole(logger: Logger): Console {
  const at =
    (level: LogLevel) =>
    (...args: unknown[]) =>
      logger.log(level, format(...args), { source: 'console' });
  return {
    ...console,
    log: at('info'),
    info: at('info'),
    warn: at('warning'),
    error: at('error'),
    // k6 prints console.debug only with --verbose: the logger decides (see withoutDebug).
    debug: at('debug'),
  } as Console;
}

/** The message of an error, with its stack when it has one. */
export function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? error.message;
  return String(error);
}
