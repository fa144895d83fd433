// Finds and vets the k6 a study will run, before any database or service starts.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { ERROR_CODES, PlateauError } from '../../contract/index.ts';

/** The oldest k6 the bundles are checked against: ES2017 syntax and the arrival-rate executors with `exec`. */
export const MIN_K6 = { major: 0, minor: 43 } as const;

const INSTALL_HINT =
  'install k6 (https://grafana.com/docs/k6/latest/set-up/install-k6/), point --k6-bin or K6_BIN at it, or use --engine embedded';

/** A k6 that answered `k6 version`. */
export interface K6Binary {
  path: string;
  /** Its `k6 version` line, e.g. `k6 v0.49.0 (go1.19.8, linux/amd64)`. */
  version: string;
}

/**
 * Resolves `bin` (a path, or a name looked up on PATH), checks it is an executable file and
 * asks its version. Throws a PlateauError (exit 104) naming the problem and the fix: not
 * found, not executable, not a k6, or older than {@link MIN_K6}.
 */
export function vetK6Binary(bin: string, env: NodeJS.ProcessEnv = process.env): K6Binary {
  const path = resolveOnPath(bin, env.PATH ?? '');
  if (!path) {
    throw new PlateauError(
      ERROR_CODES.INVALID_CONFIG,
      `k6 not found: ${bin} ${bin.includes('/') ? 'does not exist' : 'is not on PATH'}`,
      {
        hint: INSTALL_HINT,
      },
    );
  }
  try {
    if (!statSync(path).isFile()) throw new Error('not a file');
    accessSync(path, constants.X_OK);
  } catch {
    throw new PlateauError(ERROR_CODES.INVALID_CONFIG, `${path} is not an executable file`, {
      hint: `chmod +x ${path}, or ${INSTALL_HINT}`,
    });
  }
  let version: string;
  try {
    version = execFileSync(path, ['version'], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
      .split('\n')[0]!
      .trim();
  } catch (error) {
    throw new PlateauError(
      ERROR_CODES.INVALID_CONFIG,
      `${path} version failed: ${(error as Error).message.split('\n')[0]}`,
      {
        hint: `is it k6? ${INSTALL_HINT}`,
      },
    );
  }
  const parsed = parseK6Version(version);
  if (!parsed) {
    throw new PlateauError(
      ERROR_CODES.INVALID_CONFIG,
      `${path} does not look like k6: its version says "${version}"`,
      {
        hint: INSTALL_HINT,
      },
    );
  }
  if (parsed.major < MIN_K6.major || (parsed.major === MIN_K6.major && parsed.minor < MIN_K6.minor)) {
    throw new PlateauError(
      ERROR_CODES.INVALID_CONFIG,
      `${version.split(' ').slice(0, 2).join(' ')} is older than plateau supports (k6 v${MIN_K6.major}.${MIN_K6.minor} or later)`,
      { hint: `upgrade k6, or use --engine embedded (${INSTALL_HINT.split(', ')[0]})` },
    );
  }
  return { path, version };
}

/** Modules a bundle may import that older k6 lacks, with the release that added each. */
const MODULE_SINCE: Record<string, { major: number; minor: number }> = {
  'k6/experimental/timers': { major: 0, minor: 40 },
  'k6/timers': { major: 0, minor: 50 },
};

/**
 * Throws (exit 104) when a bundle imports a module the k6 of `versionLine` does not have,
 * naming the module, the release that added it and the fix. Unknown versions pass.
 */
export function requireK6For(imports: readonly string[], versionLine: string): void {
  const version = parseK6Version(versionLine);
  if (!version) return;
  for (const module of imports) {
    const since = MODULE_SINCE[module];
    if (!since) continue;
    if (version.major < since.major || (version.major === since.major && version.minor < since.minor)) {
      throw new PlateauError(
        ERROR_CODES.INVALID_CONFIG,
        `the script imports ${module}, which k6 has from v${since.major}.${since.minor}; ${versionLine.split(' ').slice(0, 2).join(' ')} does not`,
        {
          hint: `upgrade k6, or use --engine embedded${module === 'k6/timers' ? ', or import k6/experimental/timers (k6 v0.40+)' : ''}`,
        },
      );
    }
  }
}

/** `k6 v0.49.0 (…)` → { major: 0, minor: 49 }; undefined when the line is not k6's. */
export function parseK6Version(line: string): { major: number; minor: number } | undefined {
  const match = /^k6 v(\d+)\.(\d+)/.exec(line.trim());
  return match ? { major: Number(match[1]), minor: Number(match[2]) } : undefined;
}

function resolveOnPath(bin: string, pathVar: string): string | undefined {
  if (bin.includes('/')) {
    const path = isAbsolute(bin) ? bin : join(process.cwd(), bin);
    try {
      statSync(path);
      return path;
    } catch {
      return undefined;
    }
  }
  for (const dir of pathVar.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, bin);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return undefined;
}
