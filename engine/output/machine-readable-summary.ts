// k6's machine-readable summary (--new-machine-readable-summary, schema 1.0.0): what
// handleSummary receives and --summary-export writes when it is asked for, instead of the
// legacy-shaped data (k6-compat.md §3). Keys are snake_case, as k6 maps its Go struct.
import { pathToFileURL } from 'node:url';
import { PLATEAU_VERSION } from '../../lib/version.ts';
import type { SummaryData, SummaryMetric } from './summary.ts';
import { summaryShows, type TextSummaryMode } from './text-summary.ts';

/** The schema version k6 writes. */
export const MACHINE_READABLE_SCHEMA_VERSION = '1.0.0';

export interface MachineReadableMetric {
  name: string;
  type: string;
  contains: string;
  values: Record<string, number>;
}

export interface MachineReadableSummary {
  config: { duration: number; execution: 'local'; script: string };
  metadata: { generated_at: string; k6_version: string };
  results: {
    checks: {
      metrics: MachineReadableMetric[];
      results: { name: string; passes: number; fails: number }[];
    };
    metrics: MachineReadableMetric[];
  };
  version: string;
}

/** The trend statistics the schema has room for, when the summary computed them. */
const TREND_KEYS = ['avg', 'max', 'med', 'min', 'p(90)', 'p(95)'];

function schemaValues(metric: Pick<SummaryMetric, 'type' | 'values'>): Record<string, number> {
  const v = metric.values;
  switch (metric.type) {
    case 'counter':
      return { count: v.count ?? 0 };
    case 'gauge':
      return { max: v.max ?? 0, min: v.min ?? 0, value: v.value ?? 0 };
    case 'rate':
      return {
        matches: v.passes ?? 0,
        rate: v.rate ?? 0,
        total: (v.passes ?? 0) + (v.fails ?? 0),
      };
    default:
      return Object.fromEntries(TREND_KEYS.filter((key) => key in v).map((key) => [key, v[key]!]));
  }
}

/**
 * Builds the machine-readable summary from the legacy-shaped data: the metrics the text
 * summary of `mode` lists (sorted by name), the checks' three metrics and each check.
 */
export function machineReadableSummary(
  data: SummaryData,
  mode: TextSummaryMode,
  scriptPath: string,
  now = new Date(),
): MachineReadableSummary {
  const checks: { name: string; passes: number; fails: number }[] = [];
  const collect = (group: SummaryData['root_group']) => {
    for (const check of group.checks)
      checks.push({ name: check.name, passes: check.passes, fails: check.fails });
    for (const child of group.groups) collect(child);
  };
  collect(data.root_group);
  const passes = checks.reduce((sum, c) => sum + c.passes, 0);
  const total = passes + checks.reduce((sum, c) => sum + c.fails, 0);
  const rate = (matches: number) => ({ matches, rate: total ? matches / total : 0, total });
  const checkMetrics: MachineReadableMetric[] = [
    { name: 'checks_total', type: 'counter', contains: 'default', values: { count: total } },
    { name: 'checks_failed', type: 'rate', contains: 'default', values: rate(total - passes) },
    { name: 'checks_succeeded', type: 'rate', contains: 'default', values: rate(passes) },
  ];
  const metrics = Object.entries(data.metrics)
    .filter(([name]) => summaryShows(name, mode === 'legacy' ? 'full' : mode))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, m]) => ({ name, type: m.type, contains: m.contains, values: schemaValues(m) }));
  return {
    config: {
      duration: data.state.testRunDurationMs / 1000,
      execution: 'local',
      script: pathToFileURL(scriptPath).href,
    },
    // The engine's own version, in semver form, where k6 writes its version.
    metadata: { generated_at: now.toISOString(), k6_version: `${PLATEAU_VERSION}-plateau` },
    results: { checks: { metrics: checkMetrics, results: checks }, metrics },
    version: MACHINE_READABLE_SCHEMA_VERSION,
  };
}
