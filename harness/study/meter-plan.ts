// Which published meters a study reads: --metrics, --prometheus, --prometheus-match, the
// resources declared in plateau.config, and PostgreSQL's own views.
import type { ConfigProblem, DeclaredResource } from '../../contract/index.ts';
import { checkSourceUrl } from '../sources/meter-source.ts';
import { checkPrometheusMatch } from '../sources/prometheus-server.ts';

/** The raw flags (strings as commander gives them) and the config file's `resources`. */
export interface MeterFlags {
  metrics?: string[];
  prometheus?: string;
  prometheusMatch?: string;
  /** `plateau.config`'s `resources: [...]`, parsed by analysis/resources/declared-resources.ts. */
  resources?: DeclaredResource[];
  /** false with `--no-postgres-activity`: do not read pg_stat_activity. */
  postgresActivity?: boolean;
}

/** The meters a study reads. */
export interface MeterPlan {
  /** Prometheus text endpoints scraped once a second during the load. */
  metrics: string[];
  /** A Prometheus server's HTTP API, read over the run's window after the load. */
  prometheus: { url: string; match: string } | null;
  declared: DeclaredResource[];
  /** Whether to read PostgreSQL's own views when plateau knows its URL. */
  postgresActivity: boolean;
}

/**
 * The meter plan of a study's flags; every problem is added to `problems` with a hint
 * (a URL that is not http(s), a match that is not a `{…}` label-matcher block, a match
 * without --prometheus).
 */
export function planMeters(flags: MeterFlags, problems: ConfigProblem[]): MeterPlan {
  const metrics: string[] = [];
  for (const url of flags.metrics ?? []) {
    const problem = checkSourceUrl(url, '--metrics');
    if (problem) problems.push(problem);
    else if (!metrics.includes(url)) metrics.push(url);
  }
  let prometheus: MeterPlan['prometheus'] = null;
  const match = (flags.prometheusMatch ?? '').trim();
  if (flags.prometheus !== undefined) {
    const problem = checkSourceUrl(flags.prometheus, '--prometheus');
    if (problem) problems.push(problem);
    else prometheus = { url: flags.prometheus.replace(/\/+$/, ''), match };
  }
  if (match !== '' && flags.prometheus === undefined) {
    problems.push({
      setting: '--prometheus-match',
      message: 'needs --prometheus (it scopes the series read from a Prometheus server)',
      hint: 'give --prometheus http://…:9090 --prometheus-match \'{job="orders"}\'',
    });
  } else if (match !== '') {
    const problem = checkPrometheusMatch(match, '--prometheus-match');
    if (problem) problems.push(problem);
  }
  return {
    metrics,
    prometheus,
    declared: flags.resources ?? [],
    postgresActivity: flags.postgresActivity !== false,
  };
}
