// The sources of a study's published meters, as one part: started before the load, stopped after it.

import { declaredFieldReadings } from '../../analysis/resources/declared-resources.ts';
import { meterNamesRead } from '../../analysis/resources/resource-series.ts';
import type { MeterSourceStatus } from '../../contract/index.ts';
import { MeterLog as Log, type MeterLog, type MeterSource, meterLogPath } from '../sources/meter-source.ts';
import { MetricsEndpointSource } from '../sources/metrics-endpoint.ts';
import { PostgresActivitySource } from '../sources/postgres-activity.ts';
import { type DeclaredExpression, PrometheusServerSource } from '../sources/prometheus-server.ts';
import type { MeterPlan } from './meter-plan.ts';

/**
 * Every meter source of one study writing to the run directory's meters.ndjson: each
 * `--metrics` endpoint and PostgreSQL's views (when plateau has the database's URL) read
 * once a second during the load, and a `--prometheus` server read over the same window
 * when the sources stop. None of them can fail the study: each says how it fared in its
 * status, which run.json keeps.
 */
export class StudyMeters {
  readonly #log: MeterLog;
  readonly #sources: MeterSource[];

  /** Builds the sources; a bad `--prometheus-match` throws here, before anything starts. */
  constructor(plan: MeterPlan, runDir: string, databaseUrl: string | null) {
    this.#log = new Log(meterLogPath(runDir));
    const names = meterNamesRead(plan.declared);
    const keep = (name: string) => names.has(name);
    this.#sources = plan.metrics.map((url) => new MetricsEndpointSource(url, { log: this.#log, keep }));
    if (databaseUrl && plan.postgresActivity)
      this.#sources.push(new PostgresActivitySource({ url: databaseUrl, log: this.#log }));
    if (plan.prometheus) {
      const expressions: DeclaredExpression[] = plan.declared.flatMap((resource) =>
        declaredFieldReadings(resource)
          .filter((reading) => reading.promql)
          .map((reading) => ({ name: resource.name, field: reading.field, promql: reading.expr })),
      );
      this.#sources.push(
        new PrometheusServerSource({
          url: plan.prometheus.url,
          match: plan.prometheus.match,
          names: [...names].filter((name) => !name.startsWith('plateau_')),
          expressions,
          log: this.#log,
        }),
      );
    }
  }

  /** Whether any source will be read. */
  get any(): boolean {
    return this.#sources.length > 0;
  }

  /** Starts every source (each reads in the background). */
  start(): void {
    for (const source of this.#sources) source.start();
  }

  /**
   * Stops every source (a Prometheus server is read over the window then) and closes
   * meters.ndjson; resolves with each source's status, and a note when the file itself
   * could not be written.
   */
  async stop(): Promise<MeterSourceStatus[]> {
    const statuses = await Promise.all(this.#sources.map((source) => source.stop()));
    await this.#log.close();
    if (this.#log.error !== null) {
      for (const status of statuses) {
        status.lastError = `${this.#log.error} (${this.#log.lost} readings lost)`;
        status.firstError ??= status.lastError;
      }
    }
    return statuses;
  }
}
