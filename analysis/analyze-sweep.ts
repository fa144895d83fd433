// The closed-model sweep's analysis: its levels, verdict, record and tables, from the rows
// analyze read.
import { basename } from 'node:path';
import type {
  AnalysisResult,
  GeneratorCpuReport,
  ResourcesReport,
  RunEnding,
  RunManifest,
  SaturationRow,
  ServerStepReport,
  VerdictCriteria,
} from '../contract/index.ts';
import { type AnalysisOutput, clientSecondsOf, DEFAULT_OBJECTIVES } from './analysis-output.ts';
import type { ReadStats } from './client-sample.ts';
import type { ClientSteps } from './client-steps.ts';
import { decideSweep, sweepAsVerdict, sweepRows } from './closed-sweep.ts';
import { fitUsl, sweepUslPoints } from './fit/usl.ts';
import { renderSweepRecord, renderSweepTableMarkdown, renderSweepTableText } from './render-sweep.ts';
import { rowsStanding } from './run-ending.ts';
import { loadSweepTemplates } from './templates.ts';

/**
 * The closed-model branch of {@link analyze}: the sweep's rows, verdict (with the USL fitted to
 * goodput per level), record and tables.
 */
export async function analyzeSweep(input: {
  rows: SaturationRow[];
  client: ClientSteps;
  manifest: RunManifest | undefined;
  server: ServerStepReport | undefined;
  serverFile: string | undefined;
  manifestFile: string | undefined;
  clientFiles: readonly string[];
  readStats: ReadStats;
  criteria: VerdictCriteria;
  notes: string[];
  generator: GeneratorCpuReport | undefined;
  resources: ResourcesReport | undefined;
  /** How the run ended when it did not complete. */
  ending: RunEnding | undefined;
}): Promise<AnalysisOutput> {
  const { rows, client, manifest, server, readStats } = input;
  const load = manifest?.load;
  const recoveryVus = load?.recoveryVus ?? null;
  const recoveryRow = rows.find((r) => r.step === 'recovery');
  // A level the run ended during is not a level of the sweep (the table keeps it, marked).
  const sweep = sweepRows(
    rows.filter((r) => !r.cutShort),
    recoveryVus,
  );
  const decided = decideSweep(sweep, {
    recoveryVus,
    deadlineMs: load?.timeoutSeconds !== undefined ? load.timeoutSeconds * 1000 : null,
    goodputBySecond: (fromS, toS) => {
      const out: number[] = [];
      for (let s = fromS; s + 1 <= toS + 1e-9; s++) out.push(client.series.window(s, s + 1).ok2xx);
      return out;
    },
    recoveryWindowS: recoveryRow?.window
      ? { fromS: recoveryRow.window.startS, toS: recoveryRow.window.endS }
      : null,
  });
  // The curve's shape: the Universal Scalability Law fitted to goodput per level of clients.
  const verdict = {
    ...decided,
    usl: fitUsl(sweepUslPoints(sweep)),
  };
  const notes = [...input.notes];
  if (!server) notes.push('no server side (GET /steps): completed/s and what was full are unknown');
  if (readStats.skipped > 0 || readStats.nulBytes > 0) {
    notes.push(
      `the client file was damaged: ${readStats.skipped} records skipped, ${readStats.nulBytes} NUL bytes removed`,
    );
  }
  if (!manifest) notes.push('no run.json: the deadline, retries and the recovery clients were not known');
  const analysis: AnalysisResult = {
    kind: 'plateau.analysis',
    schemaVersion: 2,
    model: 'closed',
    runId: manifest?.id ?? null,
    sources: {
      client: input.clientFiles.map((file) => basename(file)).join(', '),
      server: server && input.serverFile ? basename(input.serverFile) : null,
      manifest: manifest && input.manifestFile ? basename(input.manifestFile) : null,
    },
    objectives: manifest
      ? { p95Ms: manifest.load.p95Ms, failRate: manifest.load.failRate }
      : DEFAULT_OBJECTIVES,
    criteria: input.criteria,
    table: rows,
    verdict: sweepAsVerdict(verdict, notes),
    sweep: { rows: sweep, verdict },
    ...(input.ending ? { ended: { ...input.ending, rowsStanding: rowsStanding(rows) } } : {}),
  };
  const templates = await loadSweepTemplates();
  return {
    analysis,
    record: renderSweepRecord(templates, analysis, manifest),
    tableMarkdown: renderSweepTableMarkdown(templates, sweep),
    tableText: renderSweepTableText(sweep),
    readStats,
    seriesSources: {
      clientSeconds: clientSecondsOf(client),
      server,
      generator: input.generator,
      resources: input.resources,
    },
    manifest,
    resources: input.resources,
  };
}
