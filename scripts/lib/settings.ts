// Reads script settings from __ENV with defaults, collecting every problem at once.
// Pure: no k6 imports, so it is unit-tested in Node and bundled into every script.
import { describeRange, type NumberLimits, parseNumberText } from '../../lib/number-text.ts';
import { stepSequenceProblem } from './steps.ts';

/** The environment a script sees (`__ENV` in k6). */
export type Env = Record<string, string | undefined>;

/** Thrown from a script's init code when settings are bad; k6 then exits with code 107. */
export class SettingsError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid settings (${problems.length}):\n  ${problems.join('\n  ')}`);
    this.name = 'SettingsError';
    this.problems = problems;
  }
}

const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/**
 * Parses a duration: a plain number is seconds (`20`, `0.5`); otherwise Go-style units
 * (`500ms`, `20s`, `1m30s`, `2h`). Returns undefined when it is neither.
 */
export function parseSeconds(raw: string): number | undefined {
  const text = raw.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const match of text.matchAll(DURATION_PART)) total += Number(match[1]) * UNIT_SECONDS[match[2]!]!;
  return total;
}

/** Formats seconds as a k6 duration string: whole seconds as `20s`, otherwise `1500ms`. */
export function formatDuration(seconds: number): string {
  return Number.isInteger(seconds) ? `${seconds}s` : `${Math.round(seconds * 1000)}ms`;
}

/**
 * Reads typed settings from an env map. Each reader returns the default when the variable
 * is unset or empty, and records a problem (returning the default) when it is malformed;
 * `check()` then throws one SettingsError that names every bad variable and what is accepted.
 */
export class SettingsReader {
  // TypeScript-private rather than #private: bundles target ES2017, where #fields
  // would be lowered to WeakMap helpers.
  private readonly env: Env;
  private readonly problems: string[] = [];

  constructor(env: Env) {
    this.env = env;
  }

  private raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  /** Records a problem found by cross-checking settings. */
  problem(name: string, message: string): void {
    this.problems.push(`${name}: ${message}`);
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  /** A number within [min, max]; `integer` requires a whole number. */
  number(name: string, fallback: number, limits: NumberLimits = {}): number {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    const value = parseNumberText(raw, limits);
    if (value === undefined) {
      this.problem(name, `"${raw}" is not accepted; use ${describeRange(limits)}`);
      return fallback;
    }
    return value;
  }

  /** A duration in seconds (see {@link parseSeconds}), at least `min`. */
  seconds(name: string, fallback: number, limits: { min?: number } = {}): number {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    const value = parseSeconds(raw);
    const min = limits.min ?? 0;
    if (value === undefined || value < min) {
      this.problem(
        name,
        `"${raw}" is not accepted; use a duration of at least ${min} s, e.g. 20 or 20s or 1m30s`,
      );
      return fallback;
    }
    return value;
  }

  /**
   * Comma-separated strictly increasing positive whole numbers (`20,40,60`): k6 reads
   * arrival rates, stage targets and VU counts as integers.
   */
  increasingList(name: string, fallback: readonly number[], what = 'whole numbers'): number[] {
    const raw = this.raw(name);
    if (raw === undefined) return [...fallback];
    const parts = raw.split(',').map((p) => p.trim());
    const values = parts.map(Number);
    const wellFormed = parts.every((p) => /^\d+$/.test(p)) && values.every((v) => v > 0);
    const increasing = values.every((v, i) => i === 0 || v > values[i - 1]!);
    if (!wellFormed || !increasing) {
      this.problem(name, `"${raw}" is not accepted; use strictly increasing positive ${what}, e.g. 20,40,60`);
      return [...fallback];
    }
    return values;
  }

  /**
   * Comma-separated positive whole rates of a stepped plan (`20,40,60,40`): each above every
   * one before it, or a repeat of one already run (scripts/lib/steps.ts stepSequenceProblem).
   */
  stepList(name: string, fallback: readonly number[], what = 'whole rates'): number[] {
    const raw = this.raw(name);
    if (raw === undefined) return [...fallback];
    const parts = raw.split(',').map((p) => p.trim());
    const values = parts.map(Number);
    const wellFormed = parts.every((p) => /^\d+$/.test(p)) && values.every((v) => v > 0);
    const why = wellFormed ? stepSequenceProblem(values) : undefined;
    if (!wellFormed || why !== undefined) {
      this.problem(
        name,
        `"${raw}" is not accepted${why ? ` (${why})` : ''}; use increasing positive ${what}, e.g. 20,40,60, where a lower rate repeats an earlier step (20,40,60,40)`,
      );
      return [...fallback];
    }
    return values;
  }

  /** Throws a SettingsError listing every problem recorded so far. */
  check(): void {
    if (this.problems.length > 0) throw new SettingsError(this.problems);
  }
}
