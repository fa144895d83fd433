// plateau.config.{ts,js,json,yaml,yml}: what a study's flags say, in one file, so a nightly
// job is one command. The flags typed on the command line override the file; run.json
// records which values came from it (source `config`).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { Script } from 'node:vm';
import type { Command } from 'commander';
import { type ConfigProblem, ERROR_CODES, PlateauError, type SourcedValue } from '../contract/index.ts';
import { commonJsExports } from '../lib/commonjs-exports.ts';
import { build } from '../lib/esbuild-build.ts';

/** The names `plateau run` and `check` look for in the working directory, in this order. */
export const CONFIG_NAMES = [
  'plateau.config.ts',
  'plateau.config.js',
  'plateau.config.json',
  'plateau.config.yaml',
  'plateau.config.yml',
] as const;

/** The commands that start the config's `service:` block for their study. */
const SERVICE_COMMANDS = new Set(['run']);

/** Settings whose values are paths, resolved against the config file's directory. */
const PATH_KEYS = new Set(['script', 'out', 'k6Bin']);

/** The config file `--config` names, else the first of CONFIG_NAMES in `dir`. */
export function findConfigFile(given: string | undefined, dir = process.cwd()): string | undefined {
  if (given !== undefined) return resolve(given);
  return CONFIG_NAMES.map((name) => join(dir, name)).find((path) => existsSync(path));
}

/**
 * The file's settings for `section` (`run` or `check`): its top-level keys, then its
 * `run:`/`check:` section over them. A TypeScript or JavaScript file default-exports an
 * object (`export default { target: 'http://127.0.0.1:8080', steps: [20, 40] }`).
 */
export async function readConfigFile(path: string, section: string): Promise<Record<string, unknown>> {
  let raw: unknown;
  try {
    const ext = extname(path);
    if (ext === '.json') raw = JSON.parse(readFileSync(path, 'utf8'));
    // yaml is imported here, not with the CLI: most runs have no YAML config file.
    else if (ext === '.yaml' || ext === '.yml')
      raw = commonJsExports(await import('yaml')).parse(readFileSync(path, 'utf8'));
    else if (ext === '.ts' || ext === '.js' || ext === '.mjs') raw = await evaluateModule(path);
    else throw new Error(`its extension is none of ${CONFIG_NAMES.map((n) => extname(n)).join(', ')}`);
  } catch (error) {
    throw new PlateauError(
      ERROR_CODES.INVALID_CONFIG,
      `cannot read the config file ${path}: ${(error as Error).message}`,
      {
        hint: 'write it as JSON, YAML, or a .ts/.js file that default-exports an object of settings',
        cause: error,
      },
    );
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw PlateauError.invalidConfig([
      {
        setting: path,
        message: 'holds no object of settings',
        hint: 'e.g. { "target": "http://127.0.0.1:8080", "steps": [20, 40] }',
      },
    ]);
  }
  const { run, check, ...common } = raw as Record<string, unknown>;
  const own = section === 'run' ? run : section === 'check' ? check : undefined;
  const merged = { ...common, ...(own && typeof own === 'object' ? (own as Record<string, unknown>) : {}) };
  const base = dirname(path);
  for (const key of PATH_KEYS) {
    if (typeof merged[key] === 'string') merged[key] = resolve(base, merged[key] as string);
  }
  if (typeof merged.body === 'string' && merged.body.startsWith('@')) {
    merged.body = `@${resolve(base, merged.body.slice(1))}`;
  }
  // The service runs in `cwd` relative to the file, by default the file's own directory.
  const service = merged.service;
  if (service && typeof service === 'object' && !Array.isArray(service)) {
    const { cwd } = service as { cwd?: unknown };
    if (cwd === undefined || typeof cwd === 'string')
      merged.service = { ...service, cwd: resolve(base, (cwd as string | undefined) ?? '.') };
  }
  return merged;
}

/** A .ts/.js config: bundled by esbuild and evaluated; its default export (or exports). */
async function evaluateModule(path: string): Promise<unknown> {
  const result = await build({
    entryPoints: [path],
    bundle: true,
    format: 'cjs',
    platform: 'node',
    write: false,
    logLevel: 'silent',
  });
  const module = { exports: {} as Record<string, unknown> };
  const factory = new Script(`(function (module, exports, require) {${result.outputFiles[0]!.text}\n})`, {
    filename: path,
  }).runInThisContext() as (m: typeof module, e: object, r: unknown) => void;
  factory(module, module.exports, undefined);
  return module.exports.default ?? module.exports;
}

/**
 * `flags` with the file's settings where the command line gave none. Every key must be a
 * flag of `command` (camelCase: `recoveryRate`, `expectStatus`); a list becomes the
 * comma-separated text or the repeated flag the command takes, and `set` may be an object.
 * `service` (for `plateau run`) is not a flag: its block goes into `flags.serviceProcess`
 * as written, for planStudy to read; nor is `resources` (the declared resources), which
 * goes into `flags.resources`. Returns the keys taken from the file.
 */
export function applyConfig<T extends object>(
  flags: T,
  command: Command,
  config: Record<string, unknown>,
  path: string,
): { flags: T; fromConfig: Set<string> } {
  const problems: ConfigProblem[] = [];
  const options = new Map(command.options.map((option) => [option.attributeName(), option]));
  const merged = { ...flags } as Record<string, unknown>;
  const fromConfig = new Set<string>();
  for (const [key, value] of Object.entries(config)) {
    if (key === 'resources') {
      // Not a flag: the resources declared for the verdict (analysis/resources/declared-resources.ts).
      (merged as { resources?: unknown }).resources = value;
      fromConfig.add(key);
      continue;
    }
    if (key === 'service') {
      // Not a flag: the block of the service plateau starts (harness/study/service-process.ts).
      if (SERVICE_COMMANDS.has(command.name())) {
        (merged as { serviceProcess?: unknown }).serviceProcess = value;
        fromConfig.add(key);
      } else
        problems.push({
          setting: `${path}: service`,
          message: `plateau ${command.name()} does not start a service`,
          hint: 'put service: under run:, and start the service yourself before this command',
        });
      continue;
    }
    const option = options.get(key);
    if (!option || key === 'config') {
      problems.push({
        setting: `${path}: ${key}`,
        message: `is not a setting of plateau ${command.name()}`,
        hint: `use the flags' names in camelCase: ${[...options.keys()].filter((k) => k !== 'config').join(', ')}`,
      });
      continue;
    }
    if (command.getOptionValueSource(key) === 'cli') continue;
    const repeatable =
      Array.isArray(option.defaultValue) || option.variadic || key === 'header' || key === 'set';
    let converted: unknown;
    if (key === 'set' && value && typeof value === 'object' && !Array.isArray(value)) {
      converted = Object.entries(value).map(([k, v]) => `${k}=${String(v)}`);
    } else if (Array.isArray(value)) converted = repeatable ? value.map(String) : value.map(String).join(',');
    else if (typeof value === 'boolean') converted = option.isBoolean() ? value : String(value);
    else if (typeof value === 'string' || typeof value === 'number')
      converted = repeatable ? [String(value)] : String(value);
    else {
      problems.push({
        setting: `${path}: ${key}`,
        message: `${JSON.stringify(value)} is not accepted`,
        hint: 'use a string, a number, a boolean or a list',
      });
      continue;
    }
    merged[key] = converted;
    fromConfig.add(key);
  }
  if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'config file');
  return { flags: merged as T, fromConfig };
}

/**
 * Marks the plan's values that came from the file: `--steps` ← `steps`, and each service
 * setting (`POOL_MAX`) of a `set` from the file.
 */
export function markConfigSources(
  sources: Record<string, SourcedValue>,
  fromConfig: Set<string>,
  flags: { set?: string[] },
): void {
  const mark = (name: string) => {
    const entry = sources[name];
    if (entry && entry.source === 'flag') entry.source = 'config';
  };
  for (const key of fromConfig) {
    if (key === 'set') for (const entry of flags.set ?? []) mark(entry.split('=')[0] ?? '');
    else mark(`--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
  }
}

/** Reads the config file for `command` (if any) into `flags`, recording its path in the sources. */
export async function withConfigFile<T extends { config?: string }>(
  flags: T,
  command: Command,
): Promise<{ flags: T; path: string | undefined; fromConfig: Set<string> }> {
  const path = findConfigFile(flags.config);
  if (!path) return { flags, path, fromConfig: new Set() };
  if (!existsSync(path)) {
    throw PlateauError.invalidConfig([
      {
        setting: '--config',
        message: `${path} does not exist`,
        hint: `give a config file, or name one ${CONFIG_NAMES.join(', ')} in the working directory`,
      },
    ]);
  }
  const applied = applyConfig(flags, command, await readConfigFile(path, command.name()), path);
  return { ...applied, path };
}
