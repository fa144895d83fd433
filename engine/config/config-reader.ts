// Reads k6 option values (durations, whole numbers, string maps, stages) and collects every
// problem, so that consolidateOptions reports them all at once.
import type { ConfigProblem } from '../../contract/index.ts';
import { parseDurationNs } from './duration.ts';

/** Reads values of settings named as the user wrote them; problems accumulate in `problems`. */
export class ConfigReader {
  readonly problems: ConfigProblem[] = [];

  problem(setting: string, message: string, hint: string): void {
    this.problems.push({ setting, message, hint });
  }

  /** A Go duration or a number of ms, in ns; `fallback` when unset. */
  duration(value: unknown, setting: string, fallback: number): number {
    if (value === undefined || value === null) return fallback;
    const ns = parseDurationNs(value);
    if (ns === undefined) {
      this.problem(
        setting,
        `${JSON.stringify(value)} is not a duration`,
        "use e.g. '30s', '1m30s' or a number of ms",
      );
      return fallback;
    }
    return ns;
  }

  /** A whole number of at least `min`; required when `fallback` is undefined. */
  integer(value: unknown, setting: string, fallback: number | undefined, min = 0): number {
    if (value === undefined || value === null) {
      if (fallback === undefined) {
        this.problem(setting, 'is required', `set a whole number of at least ${min}`);
        return min;
      }
      return fallback;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
      this.problem(
        setting,
        `${JSON.stringify(value)} is not accepted`,
        `use a whole number of at least ${min}`,
      );
      return fallback ?? min;
    }
    return value;
  }

  /** An object whose values become strings (tags, env, hosts). */
  stringMap(value: unknown, setting: string): Record<string, string> {
    if (value === undefined || value === null) return {};
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.problem(setting, 'is not an object of strings', "use e.g. { team: 'payments' }");
      return {};
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
  }

  /** The fields of scenario `name`, read with this reader's rules and problems. */
  scenario(name: string, fields: Record<string, unknown>): ScenarioFields {
    return new ScenarioFields(this, name, fields);
  }
}

/** One scenario's fields (`scenarios.NAME.FIELD`), read by the executor that runs it. */
export class ScenarioFields {
  readonly #reader: ConfigReader;
  readonly name: string;
  readonly fields: Record<string, unknown>;

  constructor(reader: ConfigReader, name: string, fields: Record<string, unknown>) {
    this.#reader = reader;
    this.name = name;
    this.fields = fields;
  }

  /** The setting's name as the user wrote it: `scenarios.NAME.FIELD` (`scenarios.NAME` for ''). */
  at(field: string): string {
    return field === '' ? `scenarios.${this.name}` : `scenarios.${this.name}.${field}`;
  }

  problem(field: string, message: string, hint: string): void {
    this.#reader.problem(this.at(field), message, hint);
  }

  duration(field: string, fallback: number): number {
    return this.#reader.duration(this.fields[field], this.at(field), fallback);
  }

  integer(field: string, fallback: number | undefined, min = 0): number {
    return this.#reader.integer(this.fields[field], this.at(field), fallback, min);
  }

  stringMap(field: string): Record<string, string> {
    return this.#reader.stringMap(this.fields[field], this.at(field));
  }

  /** `duration` of the executors that need one: at least 1 s, as k6 requires. */
  requiredDuration(): number {
    const ns = this.duration('duration', 0);
    if (ns < 1e9) this.problem('duration', 'is missing or under 1s', "use e.g. '30s'");
    return ns;
  }

  /** A non-empty list of `{ duration, target }`. */
  stages(field = 'stages'): { durationNs: number; target: number }[] {
    const list = this.fields[field];
    if (!Array.isArray(list) || list.length === 0) {
      this.problem(field, 'needs at least one stage', "e.g. [{ duration: '30s', target: 10 }]");
      return [];
    }
    return list.map((stage: Record<string, unknown>, i: number) => ({
      durationNs: this.#reader.duration(stage?.duration, this.at(`${field}[${i}].duration`), 0),
      target: this.#reader.integer(stage?.target, this.at(`${field}[${i}].target`), undefined, 0),
    }));
  }
}
