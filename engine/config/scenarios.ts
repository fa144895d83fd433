// The fields every scenario has, whatever its executor (k6 lib/executor/base_config.go).
// Each executor's own fields, parsing and plan live in its file under engine/executor/.
import type { ScenarioFields } from './config-reader.ts';

const SCENARIO_NAME = /^[0-9a-zA-Z_-]+$/;
/** k6's default gracefulStop (and gracefulRampDown). */
export const DEFAULT_GRACEFUL_NS = 30e9;

/** Fields every executor has. */
export interface BaseScenario {
  name: string;
  /** Delay from the end of setup, ns. */
  startTimeNs: number;
  /** Time running iterations get after the scenario's regular end, ns (default 30 s). */
  gracefulStopNs: number;
  /** Exported function to run per iteration (default `default`). */
  exec: string;
  /** Merged over `__ENV` for this scenario's iterations. */
  env: Record<string, string>;
  /** Added to every sample of this scenario's iterations. */
  tags: Record<string, string>;
}

/** The base fields of a scenario, checked. */
export function readBaseScenario(fields: ScenarioFields): BaseScenario {
  if (!SCENARIO_NAME.test(fields.name)) {
    fields.problem('', 'has an invalid name', 'use letters, digits, _ and -');
  }
  const exec = fields.fields.exec;
  return {
    name: fields.name,
    startTimeNs: fields.duration('startTime', 0),
    gracefulStopNs: fields.duration('gracefulStop', DEFAULT_GRACEFUL_NS),
    exec: typeof exec === 'string' ? exec : 'default',
    env: fields.stringMap('env'),
    tags: fields.stringMap('tags'),
  };
}
