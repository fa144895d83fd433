// What an analysis produces before anything is written: its output, and what the rate and
// the sweep analyses both build it from.
import type { AnalysisResult, ResourcesReport, RunManifest } from '../contract/index.ts';
import type { ReadStats } from './client-sample.ts';
import type { ClientSteps } from './client-steps.ts';
import type { SeriesSources } from './report-series.ts';
import type { ClientSecond } from './second-series.ts';

/** k6's script defaults, used when there is no run.json to say otherwise. */
export const DEFAULT_OBJECTIVES = { p95Ms: 250, failRate: 0.01 };

/** What an analysis produced, rendered. */
export interface AnalysisOutput {
  analysis: AnalysisResult;
  record: string;
  tableMarkdown: string;
  tableText: string;
  readStats: ReadStats;
  /** What the report's charts are drawn from besides analysis.json (see report-series.ts). */
  seriesSources: SeriesSources;
  manifest: RunManifest | undefined;
  /** resources.json: what the service's published meters showed (absent without meters.ndjson). */
  resources?: ResourcesReport | undefined;
}

/** The client's seconds for the charts (after generator.json filled in the CPU real k6 does not report). */
export function clientSecondsOf(client: ClientSteps): ClientSecond[] {
  return client.seconds.seconds({
    latency: client.series.latencyBySecond(),
    dropped: client.droppedBySecond,
    lagMs: client.lagMsBySecond,
    cpuPct: client.cpuPctBySecond,
  });
}
