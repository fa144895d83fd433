// Loads a k6 script (bundled .js or .ts) into Node with k6's modules bound to the engine.
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { format } from 'node:util';
import { Script } from 'node:vm';
import { originalPositionFor, TraceMap } from '@jridgewell/trace-mapping';
import type * as esbuild from 'esbuild';
import { build } from '../../lib/esbuild-build.ts';
import { ScriptError } from '../errors.ts';
import { loadBlockingCallRewrite } from './blocking-calls.ts';
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
  /** Marks a group() body the blocking-call rewrite made async (blocking-calls.ts). */
  blocking: <F extends (...args: never[]) => unknown>(fn: F) => F;
}

/** group() bodies the blocking-call rewrite made async: group() waits for these. */
export const REWRITTEN_GROUP_BODIES = new WeakSet<object>();

/**
 * A loaded script. Each VU gets an instance of its own, as k6 gives each VU its own
 * runtime: module-level state is per VU (a `let counter` counts per VU), while what k6
 * shares (SharedArray, open()'s files) is shared.
 */
export interface LoadedScript {
  /** The first instance's exports: options, setup, teardown, handleSummary. */
  exports: Record<string, unknown>;
  /** Runs the init context again for a new instance (a VU's), and returns its exports. */
  newInstance(): Record<string, unknown>;
  /** Whether k6's blocking calls (http.get, sleep, …) were rewritten to be awaited. */
  rewritten: boolean;
  /** An error the script threw: its message and the script's own frames (file:line), not the engine's. */
  describeError(error: unknown): string;
}

declare global {
  var __plateau: PlateauGlobal | undefined;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Bundles `scriptPath` with esbuild, resolving `k6` and `k6/*` to the engine's modules,
 * and `__ENV`, `__VU`, `__ITER` and `console` to the engine's globals; rewrites its
 * blocking k6 calls to be awaited (blocking-calls.ts); then runs the init context once for
 * the first instance. `newInstance` runs it again for each VU, as k6 does.
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
): Promise<LoadedScript> {
  const absolute = resolve(scriptPath);
  let code: string;
  let map: string;
  try {
    const result = await build({
      entryPoints: [absolute],
      bundle: true,
      // CommonJS, so that one compiled function makes an instance per VU (an ES module
      // is evaluated once per URL).
      format: 'cjs',
      outfile: `${absolute}.plateau.js`,
      sourcemap: 'external',
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
    code = result.outputFiles.find((file) => file.path.endsWith('.js'))!.text;
    map = result.outputFiles.find((file) => file.path.endsWith('.map'))!.text;
  } catch (error) {
    const messages = (error as { errors?: esbuild.Message[] }).errors ?? [];
    const text = messages
      .map((m) =>
        m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ${m.text}` : m.text,
      )
      .join('\n');
    throw new ScriptError(`cannot load ${scriptPath}:\n${text || String(error)}`, { cause: error });
  }

  const traced = new TraceMap(map);
  const positionOf = (line: number, column: number) => {
    const original = originalPositionFor(traced, { line, column });
    if (original.source === null) return `${scriptPath} (bundled, line ${line})`;
    const full = resolve(dirname(absolute), original.source);
    const near = relative(process.cwd(), full);
    const source = near.startsWith('..') ? full : near;
    return `${source}:${original.line}:${(original.column ?? 0) + 1}`;
  };
  const rewrite = (await loadBlockingCallRewrite())(code, positionOf);
  if ('problems' in rewrite) {
    throw new ScriptError(
      `${scriptPath} makes k6's blocking calls where the embedded engine cannot wait for them:\n${rewrite.problems
        .map((p) => `  ${p.where}: ${p.message}`)
        .join('\n')}`,
    );
  }
  const init = { running: true };
  globalThis.__plateau = {
    modules,
    globals,
    console: scriptConsole(consoleLogger),
    open: initOpen(dirname(absolute), init),
    blocking: (fn) => {
      REWRITTEN_GROUP_BODIES.add(fn);
      return fn;
    },
  };
  // One compiled function; each call is an instance with module state of its own.
  const factory = new Script(`(function (module, exports) {"use strict";\n${rewrite.code}\n})`, {
    filename: absolute,
  }).runInThisContext() as (module: { exports: object }, exports: object) => void;
  const newInstance = () => {
    const module = { exports: {} };
    init.running = true;
    try {
      factory(module, module.exports);
    } finally {
      init.running = false;
    }
    return module.exports as Record<string, unknown>;
  };
  // The wrapper adds one line before the bundle; the rewrite adds none.
  const describeError = (error: unknown) =>
    scriptFrames(error, absolute, (line, column) => positionOf(line - 1, column));
  try {
    return { exports: newInstance(), newInstance, rewritten: rewrite.rewritten, describeError };
  } catch (error) {
    throw new ScriptError(`the init context of ${scriptPath} threw: ${describeError(error)}`, {
      cause: error,
    });
  }
}

/**
 * `error`'s message, then up to five of its frames in the script, each mapped to the
 * script's own source (the engine's frames would only say where the engine called it).
 */
function scriptFrames(
  error: unknown,
  file: string,
  positionOf: (line: number, column: number) => string,
): string {
  if (!(error instanceof Error)) return String(error);
  const frames: string[] = [];
  const pattern = new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+):(\\d+)`);
  for (const line of (error.stack ?? '').split('\n')) {
    const match = pattern.exec(line);
    if (match) frames.push(`    at ${positionOf(Number(match[1]), Number(match[2]) - 1)}`);
    if (frames.length === 5) break;
  }
  return [`${error.name === 'Error' ? '' : `${error.name}: `}${error.message}`, ...frames].join('\n');
}

/**
 * k6's `open(path, mode)`: a file's text, or its bytes as an ArrayBuffer with mode "b".
 * A relative path is relative to the script. Only in the init context, as in k6.
 */
function initOpen(scriptDir: string, init: { running: boolean }) {
  // Every VU's init context opens the same files: each is read once.
  const files = new Map<string, Buffer>();
  return (path: string, mode?: string): string | ArrayBuffer => {
    if (!init.running) {
      throw new Error('open() can only be called in the init context (at the top level of the script)');
    }
    const file = resolve(scriptDir, String(path));
    let bytes: Buffer;
    try {
      bytes = files.get(file) ?? readFileSync(file);
      files.set(file, bytes);
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
                text: unofferedModuleMessage(args.path, Object.keys(modules)),
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

/**
 * Why a script importing `path` (a k6 module the table lacks: `k6/ws`, `k6/net/grpc`,
 * `k6/browser`, `k6/experimental/*`, …) cannot load, and the way out: real k6. The loader
 * refuses it at load (exit 107) rather than when the import is first used mid-test.
 */
function unofferedModuleMessage(path: string, offered: readonly string[]): string {
  return `the module "${path}" is not offered by plateau's embedded engine (it offers ${offered.join(', ')}): run this script with real k6, as \`plateau run --engine k6\` for a study or \`k6 run\` for the script alone`;
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
