// The entry point of analysis: `analyze` reads a run's files through their readers
// (client-files, input-files, read-resources) and puts the pure parts in order (client steps,
// saturation table, resources, verdict, run notes, render); `analyzePath` finds the files of
// a run directory and writes what analyze produced into it.
import { basename, join } from 'node:path';
import {
  type AnalysisResult,
  ERROR_CODES,
  type GeneratorCpuReport,
  PlateauError,
  type RunManifest,
  type ServerStepReport,
  type VerdictCriteria,
} from '../contract/index.ts';
import { writeFileAtomic } from '../lib/atomic-write.ts';
import { PLATEAU_VERSION } from '../lib/version.ts';
import { type AnalysisOutput, clientSecondsOf, DEFAULT_OBJECTIVES } from './analysis-output.ts';
import { analyzeSweep } from './analyze-sweep.ts';
import { findClientFile, summaryRequestCount } from './client-files.ts';
import { readClientPass } from './client-pass.ts';
import { CLIENT_SUMMARY_FILE } from './client-summary.ts';
import { clockOffset } from './clock-offset.ts';
import { useGeneratorCpu } from './generator-cpu.ts';
import { inputStat, readJson } from './input-files.ts';
import { jitteredSafeLimit } from './jittered-safe-limit.ts';
import { refuseLiveRun } from './live-run.ts';
import { readResources } from './read-resources.ts';
import { renderRecord, renderTableMarkdown, renderTableText } from './render.ts';
import { renderReport } from './render-report.ts';
import { displayPath, reportRun } from './report-run.ts';
import { attachResources } from './resources/attach-resources.ts';
import { METER_LOG_FILE } from './resources/meter-log.ts';
import { endingOf, markCutShort, rowsStanding } from './run-ending.ts';
import { endedNotes, runNotes } from './run-notes.ts';
import { buildSaturationTable } from './saturation-table.ts';
import { clientsFromTag, DRAIN_SECONDS } from './step-tags.ts';
import { loadReportAssets, loadTemplates } from './templates.ts';
import { DEFAULT_CRITERIA, decideVerdict } from './verdict.ts';

export type { AnalysisOutput } from './analysis-output.ts';

/**
 * Analyses a k6 output file with optional server report and manifest. Pure apart from
 * reading the files; nothing is written.
 */
export async function analyze(options: {
  /** A k6 output file, or the files of several instances of one test (execution segments). */
  clientFile: string | readonly string[];
  serverFile?: string | undefined;
  manifestFile?: string | undefined;
  windowSeconds?: number;
  /** Leave each step's ramp seconds out of its rates (needs run.json's ramp length). */
  steady?: boolean;
  /** A jittered run of the same configuration whose safe limit the record quotes (`--jittered-run`). */
  jitteredRun?: string;
  /** k6's --summary-export file, to check the client file holds every request. */
  summaryFile?: string | undefined;
  /** The verdict's thresholds (default DEFAULT_CRITERIA). */
  criteria?: VerdictCriteria;
  /** generator.json: the generator's CPU from /proc, for an engine that reports none itself. */
  generatorFile?: string | undefined;
  /** meters.ndjson: the service's published meters, read during (or after) the run. */
  meterFile?: string | undefined;
  /**
   * A run directory's client-summary.json.gz (client-summary.ts): the client side is taken
   * from it when it matches the client file, and it is written when the file is read.
   */
  clientSummary?: string | undefined;
}): Promise<AnalysisOutput> {
  const criteria = options.criteria ?? DEFAULT_CRITERIA;
  const manifest = options.manifestFile
    ? await readJson<RunManifest>(options.manifestFile, 'plateau.run')
    : undefined;
  const server = options.serverFile
    ? await readJson<ServerStepReport>(options.serverFile, 'plateau.server-steps')
    : undefined;
  const clientFiles = typeof options.clientFile === 'string' ? [options.clientFile] : options.clientFile;
  // A run that ended early wrote only part of its last second: that second is left out.
  const ending = endingOf(manifest);
  const pass = await readClientPass({
    clientFiles,
    windowSeconds: options.windowSeconds ?? manifest?.load.holdSeconds ?? 10,
    lastSecondLeftOut: ending !== undefined,
    summaryFile: options.clientSummary,
  });
  const { aggregator, readStats, lastSecond } = pass;
  const endingNotes = [...(ending ? endedNotes(readStats, lastSecond) : []), ...pass.notes];
  const closedPlan = manifest?.load.model === 'closed';
  const client = aggregator.close(
    manifest && !closedPlan
      ? {
          ratesPerSec: manifest.load.stepsPerSec,
          holdSeconds: manifest.load.holdSeconds,
          recoverySeconds: manifest.load.recoverySeconds,
          drainSeconds: DRAIN_SECONDS,
        }
      : undefined,
  );
  const generator = options.generatorFile
    ? await readJson<GeneratorCpuReport>(options.generatorFile, 'plateau.generator-cpu')
    : undefined;
  const generatorNotes = generator ? useGeneratorCpu(client.cpuPctBySecond, generator) : () => [];
  const rows = buildSaturationTable(client, server, manifest, { steady: options.steady === true });
  if (ending && manifest) markCutShort(rows, manifest.load);
  const meters = options.meterFile ? await readResources(options.meterFile, manifest) : undefined;
  if (meters) attachResources(rows, meters.report.resources);
  const closed =
    closedPlan ||
    (!manifest &&
      rows.some((r) => clientsFromTag(r.step) !== null) &&
      !rows.some((r) => r.offeredPerSec !== null));
  if (closed) {
    return analyzeSweep({
      rows,
      client,
      manifest,
      server,
      serverFile: options.serverFile,
      manifestFile: options.manifestFile,
      clientFiles,
      readStats,
      criteria,
      notes: [...endingNotes, ...client.windows.notes, ...generatorNotes(rows)],
      generator,
      resources: meters?.report,
      ending,
    });
  }
  const clockOffsetS = clockOffset(rows, server);
  const drainRow = rows.find((r) => r.step === 'drain' || r.step === 'recovery');
  const lastRow = rows.at(-1);
  const objectives = manifest
    ? { p95Ms: manifest.load.p95Ms, failRate: manifest.load.failRate }
    : DEFAULT_OBJECTIVES;
  const verdict = decideVerdict({
    rows,
    settings: server?.settings ?? null,
    timeline: server?.timeline ?? [],
    objectives,
    database: manifest?.database ?? null,
    recoveryRatePerSec: manifest?.load.recoveryRatePerSec ?? null,
    jittered: (manifest?.load.jitterSeconds ?? 0) > 0,
    clientP95MsBySecond: client.p95MsAfterRampBySecond,
    criteria,
    vusMax: client.vusMax,
    clientInFlightAt: (atS) => client.series.inFlightAt(atS),
    clientRampEndS: drainRow?.window?.startS ?? null,
    clientLoadEndS: lastRow?.window?.endS ?? null,
    clockOffsetS: clockOffsetS ?? 0,
    resources: meters?.report.resources,
    ended: ending ?? null,
  });
  verdict.notes.push(
    ...endingNotes,
    ...client.windows.notes,
    ...generatorNotes(rows),
    ...(meters?.notes ?? []),
  );
  const jitteredNotes: string[] = [];
  const jittered =
    manifest && options.jitteredRun
      ? await jitteredSafeLimit(options.jitteredRun, manifest, criteria, jitteredNotes)
      : undefined;
  // Real arrivals cluster: a jittered run's safe limit decides, even over this run's own
  // (lower or unstable), except where it would stand at or above this run's plateau.
  const plateauPerSec = verdict.plateau?.servedPerSec ?? null;
  const jitteredRate = jittered?.safeLimit.ratePerSec ?? null;
  if (jittered && plateauPerSec !== null && jitteredRate !== null && jitteredRate >= plateauPerSec) {
    jitteredNotes.push(
      `jittered run ${jittered.id}'s safe limit of ${jitteredRate}/s is not quoted: it is at or above this run's plateau of ${plateauPerSec}/s, where any burst queues`,
    );
  } else if (jittered) verdict.safeLimit = { ...jittered.safeLimit, jittered: true, fromRun: jittered.id };
  verdict.notes.push(
    ...runNotes({
      rows,
      manifest,
      client,
      readStats,
      clockOffsetS,
      steady: options.steady === true,
      jittered: { notes: jitteredNotes, quotedFromRun: jittered?.id ?? null },
      summaryRequests: options.summaryFile ? await summaryRequestCount(options.summaryFile) : undefined,
      ended: ending !== undefined,
    }),
  );
  const analysis: AnalysisResult = {
    kind: 'plateau.analysis',
    schemaVersion: 2,
    runId: manifest?.id ?? null,
    sources: {
      client: clientFiles.map((file) => basename(file)).join(', '),
      server: server && options.serverFile ? basename(options.serverFile) : null,
      manifest: manifest && options.manifestFile ? basename(options.manifestFile) : null,
    },
    objectives,
    criteria,
    table: rows,
    verdict,
    ...(ending ? { ended: { ...ending, rowsStanding: rowsStanding(rows) } } : {}),
  };
  const compiled = await loadTemplates();
  return {
    analysis,
    record: renderRecord(compiled, analysis, manifest),
    tableMarkdown: renderTableMarkdown(compiled, rows),
    tableText: renderTableText(rows),
    readStats,
    seriesSources: { clientSeconds: clientSecondsOf(client), server, generator, resources: meters?.report },
    manifest,
    resources: meters?.report,
  };
}

/** How `plateau analyze` was asked to analyse. */
export interface AnalyzePathOptions {
  steady?: boolean;
  criteria?: VerdictCriteria;
  /** A jittered run of the same configuration to quote the safe limit of (a run directory). */
  jitteredRun?: string;
}

/**
 * Analyses a run directory, or a bare k6 output file, and (for a directory) writes
 * analysis.json, resources.json (with meters), record.txt, table.md and report.html into it
 * atomically. A directory's client side is read once: the first analysis leaves
 * client-summary.json.gz beside its client file, and later ones read that instead while it
 * matches the file. A run still in progress (run.lock held by a live process, or a client file
 * that grows while it is read) is refused with a PlateauError saying so.
 */
export async function analyzePath(
  paths: string | readonly string[],
  options: AnalyzePathOptions = {},
): Promise<AnalysisOutput & { runDir: string | null }> {
  if (typeof paths !== 'string' && paths.length > 1) return analyzeInstances(paths, options);
  const path = typeof paths === 'string' ? paths : paths[0]!;
  const info = await inputStat(path, 'pass a run directory (runs/<id>/) or a k6 CSV/NDJSON file');
  if (!info.isDirectory()) {
    return {
      ...(await analyze({ clientFile: path, steady: options.steady === true, criteria: options.criteria })),
      runDir: null,
    };
  }
  await refuseLiveRun(path);
  const clientFile = await findClientFile(path);
  const output = await analyze({
    clientFile,
    clientSummary: join(path, CLIENT_SUMMARY_FILE),
    serverFile: join(path, 'server.json'),
    manifestFile: join(path, 'run.json'),
    steady: options.steady === true,
    jitteredRun: options.jitteredRun,
    summaryFile: join(path, 'summary.json'),
    criteria: options.criteria,
    generatorFile: join(path, 'generator.json'),
    meterFile: join(path, METER_LOG_FILE),
  });
  await writeFileAtomic(join(path, 'analysis.json'), `${JSON.stringify(output.analysis, null, 2)}\n`);
  if (output.resources)
    await writeFileAtomic(join(path, 'resources.json'), `${JSON.stringify(output.resources, null, 2)}\n`);
  await writeFileAtomic(join(path, 'record.txt'), output.record);
  await writeFileAtomic(join(path, 'table.md'), output.tableMarkdown);
  await writeFileAtomic(
    join(path, 'report.html'),
    renderReport(await loadReportAssets(), {
      runs: [reportRun(output, output.record, '')],
      generatedAt: new Date(),
      command: `plateau report ${displayPath(path)}`,
      plateauVersion: PLATEAU_VERSION,
    }),
  );
  return { ...output, runDir: path };
}

/**
 * Analyses the k6 output files of several instances of one test (each ran an execution
 * segment) as one client side. Nothing is written.
 */
async function analyzeInstances(
  paths: readonly string[],
  options: AnalyzePathOptions,
): Promise<AnalysisOutput & { runDir: null }> {
  for (const path of paths) {
    const info = await inputStat(path, 'pass the k6 CSV/NDJSON files of the instances of one test');
    if (info.isDirectory()) {
      throw new PlateauError(
        ERROR_CODES.INPUT,
        `${path} is a directory; several paths must all be k6 output files`,
        { hint: 'analyse a run directory on its own: plateau analyze runs/<id>/' },
      );
    }
  }
  return {
    ...(await analyze({ clientFile: paths, steady: options.steady === true, criteria: options.criteria })),
    runDir: null,
  };
}
