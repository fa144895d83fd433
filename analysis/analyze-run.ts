// The entry point of analysis: the only code here that reads and writes files.
import { createReadStream, existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import {
  type AnalysisResult,
  ERROR_CODES,
  type GeneratorCpuReport,
  type MeterScrape,
  type MeterSourceStatus,
  PlateauError,
  type ResourcesReport,
  type RunEnding,
  type RunManifest,
  type SaturationRow,
  SCHEMA_VERSIONS,
  type ServerStepReport,
  type VerdictCriteria,
} from '../contract/index.ts';
import { METER_LOG_FILE, readMeterLog } from '../harness/sources/meter-source.ts';
import { writeFileAtomic } from '../lib/atomic-write.ts';
import { PLATEAU_VERSION } from '../lib/version.ts';
import type { ClientSample, ReadStats } from './client-sample.ts';
import { CLIENT_METRICS, ClientStepAggregator, type ClientSteps } from './client-steps.ts';
import { decideSweep, sweepAsVerdict, sweepRows } from './closed-sweep.ts';
import { compareRuns, type RunComparison } from './compare.ts';
import { readK6Csv } from './k6-csv.ts';
import { readK6Ndjson } from './k6-ndjson.ts';
import {
  compileTemplates,
  renderRecord,
  renderTableMarkdown,
  renderTableText,
  type Templates,
} from './render.ts';
import { compileReportTemplate, type ReportAssets, type ReportRun, renderReport } from './render-report.ts';
import {
  renderSweepRecord,
  renderSweepTableMarkdown,
  renderSweepTableText,
  type SweepTemplates,
} from './render-sweep.ts';
import { buildRunSeries, type SeriesSources } from './report-series.ts';
import { attachResources } from './resources/attach-resources.ts';
import { resourcesFromScrapes } from './resources/resource-series.ts';
import { CompleteSeconds, endingOf, markCutShort, rowsStanding } from './run-ending.ts';
import { buildSaturationTable, offeredFromTag } from './saturation-table.ts';
import type { ClientSecond } from './second-series.ts';
import { clientsFromTag, DRAIN_SECONDS } from './step-tags.ts';
import { DEFAULT_CRITERIA, decideVerdict } from './verdict.ts';
import { WholeLines } from './whole-lines.ts';

/** Client files a run directory may hold, in order of preference. */
export const CLIENT_FILES = ['k6.csv.gz', 'k6.csv', 'k6.ndjson.gz', 'k6.ndjson', 'k6.json.gz', 'k6.json'];

/** k6's script defaults, used when there is no run.json to say otherwise. */
const DEFAULT_OBJECTIVES = { p95Ms: 250, failRate: 0.01 };

/** Machine-wide busy CPU, mean over a step, at which the shared machine is noted as a limit. */
const MACHINE_SATURATED_PCT = 95;

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

const loaded = new Map<string, Templates>();

/** A record and table template pair from templates/, compiled once per process. */
async function loadPair(record: string, table: string): Promise<Templates> {
  const dir = new URL('../templates/', import.meta.url);
  let pair = loaded.get(record);
  if (!pair) {
    pair = compileTemplates({
      record: await readFile(new URL(record, dir), 'utf8'),
      table: await readFile(new URL(table, dir), 'utf8'),
    });
    loaded.set(record, pair);
  }
  return pair;
}

/** The record and table templates of a rate study. */
export function loadTemplates(): Promise<Templates> {
  return loadPair('record.txt.hbs', 'table.md.hbs');
}

let reportAssets: ReportAssets | undefined;

/**
 * report.html's template and the chart library it inlines (uPlot's minified build and
 * stylesheet, read from node_modules at render time), once per process.
 */
export async function loadReportAssets(): Promise<ReportAssets> {
  if (reportAssets) return reportAssets;
  const require = createRequire(import.meta.url);
  const uplot = (path: string) => readFile(require.resolve(`uplot/${path}`), 'utf8');
  const pkg = JSON.parse(await uplot('package.json')) as { version: string };
  reportAssets = {
    template: compileReportTemplate(
      await readFile(new URL('../templates/report.html.hbs', import.meta.url), 'utf8'),
    ),
    uplotJs: await uplot('dist/uPlot.iife.min.js'),
    uplotCss: await uplot('dist/uPlot.min.css'),
    uplotVersion: pkg.version,
  };
  return reportAssets;
}

/**
 * Opens a file as text, through gunzip when it ends in `.gz`: the one place analysis opens
 * a client file, so the readers below take streams. A file that cannot be opened is named.
 * A gzip file cut short (its writer was killed before closing it) is read to its last
 * whole line, and `onCut` is told why it ended; that is not an error.
 */
export async function openText(path: string, onCut?: (why: string) => void): Promise<Readable> {
  const source = createReadStream(path);
  await new Promise<void>((resolve, reject) => {
    source.once('open', () => resolve());
    source.once('error', (error) =>
      reject(
        new PlateauError(ERROR_CODES.INPUT, `cannot read ${path}: ${error.message}`, {
          hint: 'check the path; analysis reads what k6 (or plateau) wrote with --out csv=FILE or --out json=FILE',
          cause: error,
        }),
      ),
    );
  });
  if (!path.endsWith('.gz')) return source;
  const gunzip = createGunzip();
  const lines = new WholeLines();
  // A stream that ends mid-member errors here; nothing downstream would ever end otherwise.
  gunzip.once('error', (error) => {
    onCut?.(error.message);
    lines.cutOff();
  });
  source.once('error', (error) => {
    onCut?.(error.message);
    lines.cutOff();
  });
  source.pipe(gunzip).pipe(lines);
  return lines;
}

/**
 * Reads any k6 output file (CSV or NDJSON, plain or .gz) into the aggregator. With `emptyOk`
 * (a run that ended early) a file without a single line is no samples rather than an error.
 */
export async function readClientFile(
  path: string,
  onSample: (s: ClientSample) => void,
  options: { emptyOk?: boolean } = {},
): Promise<ReadStats> {
  const name = basename(path).replace(/\.gz$/, '');
  let cut: string | undefined;
  const onCut = (why: string) => {
    cut ??= why;
  };
  let stats: ReadStats;
  if (name.endsWith('.csv'))
    stats = await readK6Csv(await openText(path, onCut), onSample, {
      metrics: CLIENT_METRICS,
      name: path,
      emptyOk: options.emptyOk === true,
    });
  else if (name.endsWith('.json') || name.endsWith('.ndjson'))
    stats = await readK6Ndjson(await openText(path, onCut), onSample);
  else
    throw new PlateauError(ERROR_CODES.INPUT, `${path} is neither k6 CSV nor NDJSON output`, {
      hint: 'pass a file written with --out csv=FILE or --out json=FILE (.csv, .ndjson or .json, optionally .gz)',
    });
  return cut === undefined ? stats : { ...stats, cut };
}

async function readJson<T>(path: string, kind: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
    throw new PlateauError(ERROR_CODES.INPUT, `cannot read ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  let parsed: { kind?: string; schemaVersion?: number };
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new PlateauError(ERROR_CODES.INPUT, `${path} is not valid JSON (${(error as Error).message})`, {
      hint:
        kind === 'plateau.run'
          ? `it was cut short (plateau writes it whole, so something else wrote or truncated it); nothing was changed. The client side can still be analysed alone: plateau analyze ${join(dirname(path), 'k6.csv.gz')}`
          : 'it may have been cut short; rerun the step that writes it',
      cause: error,
    });
  }
  const known = SCHEMA_VERSIONS[kind as keyof typeof SCHEMA_VERSIONS];
  if (parsed.kind !== kind) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `${path} is not a ${kind} file (kind ${JSON.stringify(parsed.kind)})`,
    );
  }
  if ((parsed.schemaVersion ?? 0) > known) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `${path} has schemaVersion ${parsed.schemaVersion}, newer than this plateau reads (${known})`,
      {
        hint: 'upgrade plateau to analyse it',
      },
    );
  }
  return parsed as T;
}

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
}): Promise<AnalysisOutput> {
  const criteria = options.criteria ?? DEFAULT_CRITERIA;
  const manifest = options.manifestFile
    ? await readJson<RunManifest>(options.manifestFile, 'plateau.run')
    : undefined;
  const server = options.serverFile
    ? await readJson<ServerStepReport>(options.serverFile, 'plateau.server-steps')
    : undefined;
  const aggregator = new ClientStepAggregator({
    windowSeconds: options.windowSeconds ?? manifest?.load.holdSeconds ?? 10,
  });
  // Several instances of one segmented test merge sample by sample: every aggregate is a
  // count, a histogram, a min/max or a per-second maximum, so the order does not matter.
  const clientFiles = typeof options.clientFile === 'string' ? [options.clientFile] : options.clientFile;
  const readStats: ReadStats = { rows: 0, skipped: 0, nulBytes: 0 };
  // A run that ended early wrote only part of its last second: that second is left out.
  const ending = endingOf(manifest);
  const complete = ending ? new CompleteSeconds((s) => aggregator.add(s)) : undefined;
  for (const file of clientFiles) {
    const stats = await readClientFile(file, complete ? (s) => complete.add(s) : (s) => aggregator.add(s), {
      emptyOk: ending !== undefined,
    });
    readStats.rows += stats.rows;
    readStats.skipped += stats.skipped;
    readStats.nulBytes += stats.nulBytes;
    if (stats.cut !== undefined) readStats.cut ??= `${basename(file)}: ${stats.cut}`;
  }
  const lastSecond = complete?.close();
  const endingNotes = ending ? endedNotes(readStats, lastSecond) : [];
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
  if (clockOffsetS !== null && Math.abs(clockOffsetS) >= 1) {
    verdict.notes.push(
      `the client's and the server's clocks differ by about ${Math.round(clockOffsetS * 10) / 10} s (from when each saw the steps begin): each side's windows use its own clock, and recovery shifts the client's seconds to match`,
    );
  }
  if (client.tagged && rows.some((r) => r.offeredPerSec !== null && r.servedBasis === 'tag')) {
    verdict.notes.push(
      'some steps have no window (too few samples to place them): their served rate counts the requests sent in the step, whenever they completed',
    );
  }
  const shortSteps = rows.filter((r) => r.offeredPerSec !== null && r.seconds < 3);
  if (shortSteps.length > 0) {
    verdict.notes.push(
      `steps shorter than 3 s (${shortSteps.map((r) => r.step).join(', ')}) cannot settle: queues and rates there are transients, not evidence`,
    );
  }
  if (manifest && options.jitteredRun) {
    const jittered = await jitteredSafeLimit(options.jitteredRun, manifest, criteria, verdict.notes);
    if (jittered) {
      verdict.safeLimit = { ...jittered.safeLimit, jittered: true, fromRun: jittered.id };
      verdict.notes.push(
        `the safe limit quoted is that of jittered run ${jittered.id} (real arrivals cluster)`,
      );
    }
  }
  const summaryRequests = options.summaryFile ? await summaryRequestCount(options.summaryFile) : undefined;
  if (summaryRequests !== undefined && client.totalRequests < summaryRequests) {
    verdict.notes.push(
      `the client file holds ${client.totalRequests} of the ${summaryRequests} requests k6's summary counted: ${ending ? 'the others were in the second the run ended in (left out) or were never written' : 'it was cut short'}`,
    );
  }
  if (client.totalRequests === 0)
    verdict.notes.push('the file holds no http_reqs samples: nothing to analyse');
  if (!client.tagged && client.totalRequests > 0) {
    verdict.notes.push(
      'requests carry no step tag: rows are per scenario and time window, and no plateau can be named',
    );
  }
  if (readStats.skipped > 0 || readStats.nulBytes > 0) {
    verdict.notes.push(
      `the client file was damaged: ${readStats.skipped} records skipped, ${readStats.nulBytes} NUL bytes removed`,
    );
  }
  if (options.steady && !manifest) {
    verdict.notes.push('--steady needs run.json (the ramp length): rates are over whole holds');
  }
  if (options.steady && manifest) {
    verdict.notes.push(
      `rates leave out the first ${manifest.load.rampSeconds} s (ramp) of each step (--steady)`,
    );
  }
  if (!manifest)
    verdict.notes.push(
      'no run.json: service settings, objectives (default p95 < 250 ms, failures < 1%) and hold lengths were not known',
    );
  if (manifest) {
    const planned = manifest.load.stepsPerSec.map((r) => r);
    const seen = rows.map((r) => offeredFromTag(r.step)).filter((r): r is number => r !== null);
    const foreign = seen.filter((r) => !planned.includes(r));
    if (foreign.length > 0) {
      verdict.notes.push(
        `the client file has steps the manifest did not plan (${foreign.join(', ')}/s): it may come from a different run`,
      );
    }
  }
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

/** What the reader of a run that ended early must know of its client file. */
function endedNotes(stats: ReadStats, lastSecond: { second: number; samples: number } | undefined): string[] {
  const notes: string[] = [];
  if (stats.cut !== undefined)
    notes.push(
      `${stats.cut}: the file ends mid-stream (its writer was stopped before closing it); it was read to its last whole line`,
    );
  if (lastSecond)
    notes.push(
      `the client data is analysed up to its last complete second: the ${lastSecond.samples} samples of ${new Date(lastSecond.second * 1000).toISOString().slice(11, 19)} UTC, the second the run ended in, are left out`,
    );
  return notes;
}

/**
 * The resources in a run's meters.ndjson (none when the file is absent), with the
 * resources declared in its run.json, and the notes a reader of the record needs: sources
 * that failed, meters seen but not understood, declared series that never appeared.
 */
async function readResources(
  path: string,
  manifest: RunManifest | undefined,
): Promise<{ report: ResourcesReport; notes: string[] } | undefined> {
  if (!existsSync(path)) return undefined;
  const declared = manifest?.meters?.declared ?? [];
  const scrapes: MeterScrape[] = [];
  for await (const scrape of readMeterLog(path)) scrapes.push(scrape);
  const recognised = resourcesFromScrapes(scrapes, declared);
  const sources = manifest?.meters?.sources ?? [];
  const notes = [...recognised.notes, ...sourceNotes(sources)];
  if (recognised.resources.length === 0 && sources.length > 0) {
    notes.push(
      `no resource was recognised in the meters read (${sources.map((s) => s.source).join(', ')}): name them in plateau.config's resources, or check that the service publishes its pools under their standard names (docs/meters.md)`,
    );
  }
  return {
    report: {
      kind: 'plateau.resources',
      schemaVersion: 1,
      sources,
      resources: recognised.resources,
      notes,
    },
    notes,
  };
}

/** A source that failed some of its readings, or saw meters no family reads, in words. */
function sourceNotes(sources: MeterSourceStatus[]): string[] {
  const notes: string[] = [];
  for (const s of sources) {
    if (s.failures > 0) {
      notes.push(
        `${s.source}: ${s.failures} of ${s.attempts} readings failed (${s.firstError ?? 'unknown'}${s.lastError && s.lastError !== s.firstError ? `; last: ${s.lastError}` : ''}): seconds without a reading are left out, not guessed`,
      );
    }
    if (s.seriesCapped) {
      notes.push(
        `${s.source}: more than ${s.seriesCapped.cap} series in a reading; ${s.seriesCapped.dropped} were dropped (a cardinality explosion: a label such as a URL or a user id on a meter)`,
      );
    }
  }
  return notes;
}

/** The closed-model branch of {@link analyze}: the sweep's rows, verdict, record and tables. */
async function analyzeSweep(input: {
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
  const verdict = decideSweep(sweep, {
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

/** The record and table templates of a closed-model sweep. */
function loadSweepTemplates(): Promise<SweepTemplates> {
  return loadPair('sweep.txt.hbs', 'sweep-table.md.hbs');
}

/** The client's seconds for the charts (after generator.json filled in the CPU real k6 does not report). */
function clientSecondsOf(client: ClientSteps): ClientSecond[] {
  return client.seconds.seconds({
    latency: client.series.latencyBySecond(),
    dropped: client.droppedBySecond,
    lagMs: client.lagMsBySecond,
    cpuPct: client.cpuPctBySecond,
  });
}

/**
 * Gives the saturation table the generator's CPU from generator.json where the k6 output
 * has none (real k6 writes no engine_cpu_pct), as % of the cores it can use, so that a
 * saturated k6 is marked like a saturated engine. Returns what to note of the machine.
 */
function useGeneratorCpu(
  cpuPctBySecond: Map<number, number>,
  report: GeneratorCpuReport,
): (rows: SaturationRow[]) => string[] {
  if (cpuPctBySecond.size === 0) {
    for (const s of report.seconds)
      cpuPctBySecond.set(s.t, Math.max(cpuPctBySecond.get(s.t) ?? 0, s.usablePct));
  }
  return (rows) => {
    const busy = rows.filter((r) => {
      if (r.offeredPerSec === null || !r.window) return false;
      const inStep = report.seconds.filter(
        (s) => s.t >= Math.floor(r.window!.startS) && s.t < r.window!.endS,
      );
      const mean = inStep.reduce((a, s) => a + (s.machinePct ?? 0), 0) / Math.max(1, inStep.length);
      return inStep.length > 0 && mean >= MACHINE_SATURATED_PCT;
    });
    return busy.length > 0
      ? [
          `the machine's CPU was saturated during ${busy.map((r) => r.step).join(', ')} (≥ ${MACHINE_SATURATED_PCT}% of every core): the generator, the service and the database competed for it, so those steps measure the machine as much as the service`,
        ]
      : [];
  };
}

/**
 * Server clock minus client clock, s: the median, over the steps both sides saw, of when
 * the server saw a step's first request minus when the client's window for it began.
 * On one machine it is the network's few milliseconds; null when it cannot be told.
 */
function clockOffset(rows: SaturationRow[], server: ServerStepReport | undefined): number | null {
  if (!server) return null;
  const firsts = new Map(server.steps.map((b) => [b.step, b.firstRequestMs / 1000]));
  const offsets = rows
    .filter((r) => r.offeredPerSec !== null && r.window && firsts.has(r.step))
    .map((r) => firsts.get(r.step)! - r.window!.startS)
    .sort((a, b) => a - b);
  if (offsets.length === 0) return null;
  return offsets[Math.floor(offsets.length / 2)]!;
}

/** Finds the client file of a run directory. */
export async function findClientFile(dir: string): Promise<string> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `cannot read the run directory ${dir}: ${(error as Error).message}`,
      {
        hint: 'pass a run directory (runs/<id>/) or a k6 CSV/NDJSON file',
        cause: error,
      },
    );
  }
  const found = CLIENT_FILES.find((name) => entries.includes(name));
  if (!found) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `${dir} holds no k6 output (looked for ${CLIENT_FILES.join(', ')})`,
      {
        hint: 'the run may have failed before the load started; see run.json and the logs in that directory',
      },
    );
  }
  return join(dir, found);
}

/**
 * Analyses a run directory, or a bare k6 output file, and (for a directory) writes
 * analysis.json, record.txt and table.md into it atomically.
 */
/** How `plateau analyze` was asked to analyse. */
export interface AnalyzePathOptions {
  steady?: boolean;
  criteria?: VerdictCriteria;
  /** A jittered run of the same configuration to quote the safe limit of (a run directory). */
  jitteredRun?: string;
}

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
  const clientFile = await findClientFile(path);
  const output = await analyze({
    clientFile,
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

/** A path as the user would type it: relative to the working directory when inside it. */
function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

function reportRun(
  output: Pick<AnalysisOutput, 'analysis' | 'manifest' | 'seriesSources'>,
  recordText: string,
  label: string,
): ReportRun {
  return {
    analysis: output.analysis,
    manifest: output.manifest,
    series: buildRunSeries(output.analysis, output.manifest, output.seriesSources, label),
    recordText,
  };
}

/**
 * Writes report.html for a run directory, or for two (A, then B) a comparison report, from
 * what the directories hold: analysis.json as it was written (so a verdict judged by other
 * criteria stays as judged; recomputed when missing), record.txt, and the per-second series
 * read again from the client file, server.json, generator.json and resources.json (made again
 * from meters.ndjson when a run has meters but no resources.json). The comparison goes into
 * B's directory (where `plateau confirm` writes comparison.json) unless `out` names a file.
 * Returns the path written.
 */
export async function writeReport(dirs: [string] | [string, string], out?: string): Promise<string> {
  const runs: ReportRun[] = [];
  const read: { analysis: AnalysisResult; manifest: RunManifest | undefined }[] = [];
  for (const [index, dir] of dirs.entries()) {
    const info = await inputStat(
      dir,
      'pass a run directory (runs/<id>/) that plateau run, check or analyze wrote',
    );
    if (!info.isDirectory()) {
      throw new PlateauError(ERROR_CODES.INPUT, `${dir} is not a run directory`, {
        hint: 'plateau report reads a run directory (runs/<id>/); for a bare k6 file, run plateau analyze on it first',
      });
    }
    const existing = await readJson<AnalysisResult>(join(dir, 'analysis.json'), 'plateau.analysis');
    const resources = await readJson<ResourcesReport>(join(dir, 'resources.json'), 'plateau.resources');
    const output = await analyze({
      clientFile: await findClientFile(dir),
      serverFile: join(dir, 'server.json'),
      manifestFile: join(dir, 'run.json'),
      generatorFile: join(dir, 'generator.json'),
      summaryFile: join(dir, 'summary.json'),
      // The meters are read again only when resources.json is missing (an older analysis).
      ...(resources ? {} : { meterFile: join(dir, METER_LOG_FILE) }),
      ...(existing?.criteria ? { criteria: existing.criteria } : {}),
    });
    const analysis = existing ?? output.analysis;
    const recordText = await readFile(join(dir, 'record.txt'), 'utf8').catch(() => output.record);
    const label = dirs.length === 2 ? (index === 0 ? 'A' : 'B') : '';
    const seriesSources = { ...output.seriesSources, resources: resources ?? output.resources };
    runs.push(reportRun({ ...output, analysis, seriesSources }, recordText, label));
    read.push({ analysis, manifest: output.manifest });
  }
  const comparison: RunComparison | undefined =
    read.length === 2 ? compareRuns(read[0]!, read[1]!) : undefined;
  const target = out ?? join(dirs.at(-1)!, 'report.html');
  await writeFileAtomic(
    target,
    renderReport(await loadReportAssets(), {
      runs: runs as [ReportRun] | [ReportRun, ReportRun],
      ...(comparison ? { comparison } : {}),
      generatedAt: new Date(),
      command: `plateau report ${dirs.map(displayPath).join(' ')}${out ? ` --out ${displayPath(out)}` : ''}`,
      plateauVersion: PLATEAU_VERSION,
    }),
  );
  return target;
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

/** Stats an input path: a clear error when it is missing, or an empty file. */
async function inputStat(path: string, hint: string): Promise<Awaited<ReturnType<typeof stat>>> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (error) {
    throw new PlateauError(ERROR_CODES.INPUT, `${path} does not exist`, { hint, cause: error });
  }
  if (!info.isDirectory() && info.size === 0)
    throw new PlateauError(ERROR_CODES.INPUT, `${path} is empty`, { hint: 'the run wrote no samples' });
  return info;
}

/** A run directory's analysis (recomputed when analysis.json is missing) and manifest. */
export async function readRun(
  dir: string,
): Promise<{ analysis: AnalysisResult; manifest: RunManifest | undefined; dir: string }> {
  const manifest = await readJson<RunManifest>(join(dir, 'run.json'), 'plateau.run');
  const existing = await readJson<AnalysisResult>(join(dir, 'analysis.json'), 'plateau.analysis').catch(
    () => undefined,
  );
  const analysis = existing ?? (await analyzePath(dir)).analysis;
  return { analysis, manifest, dir };
}

/**
 * The safe limit of the jittered run at `dir`, to quote in an evenly paced run's record:
 * real arrivals cluster, and a limit measured with even arrivals flatters the service.
 * The run must be a completed, jittered study of the same service, target and steps, or
 * the user is told why not (exit 104). Judged by other criteria, it is noted and not quoted.
 */
async function jitteredSafeLimit(
  dir: string,
  manifest: RunManifest,
  criteria: VerdictCriteria,
  notes: string[],
): Promise<{ id: string; safeLimit: AnalysisResult['verdict']['safeLimit'] } | undefined> {
  const refuse = (why: string) =>
    new PlateauError(ERROR_CODES.INPUT, `--jittered-run ${dir}: ${why}`, {
      hint: 'pass the run directory of a completed `plateau run --jitter S` with the same --set, --target and --steps',
    });
  const other = await readJson<RunManifest>(join(dir, 'run.json'), 'plateau.run');
  if (!other) throw refuse('it holds no run.json');
  if (other.status !== 'completed') throw refuse(`that run is ${other.status}, not completed`);
  if (other.load.jitterSeconds <= 0) throw refuse('that run was not jittered (--jitter 0)');
  if (manifest.load.jitterSeconds > 0)
    throw refuse('this run is jittered itself; its own safe limit is the one to quote');
  const same =
    JSON.stringify(other.service) === JSON.stringify(manifest.service) &&
    other.target === manifest.target &&
    other.load.stepsPerSec.join(',') === manifest.load.stepsPerSec.join(',');
  if (!same) throw refuse("its service settings, target or steps differ from this run's");
  const analysis = await readJson<AnalysisResult>(join(dir, 'analysis.json'), 'plateau.analysis');
  if (!analysis) throw refuse('it has not been analysed (run `plateau analyze` on it first)');
  if (analysis.verdict.safeLimit.ratePerSec == null) {
    notes.push(`jittered run ${other.id} has no safe limit: none is quoted from it`);
    return undefined;
  }
  // Its safe limit follows from where its plateau was judged to be: only quote it when it
  // was judged by the same criteria (analyses written before criteria existed used the defaults).
  const theirs = analysis.criteria ?? DEFAULT_CRITERIA;
  const differ = (Object.keys(criteria) as (keyof VerdictCriteria)[]).some(
    (key) => theirs[key] !== criteria[key],
  );
  if (differ) {
    notes.push(
      `jittered run ${other.id} was judged by other criteria: its safe limit is not quoted (re-analyse it with the same flags)`,
    );
    return undefined;
  }
  return { id: other.id, safeLimit: analysis.verdict.safeLimit };
}

/** `metrics.http_reqs.count` of a k6 summary export (legacy or handleSummary shape), if readable. */
async function summaryRequestCount(path: string): Promise<number | undefined> {
  try {
    const summary = JSON.parse(await readFile(path, 'utf8')) as {
      metrics?: Record<string, { count?: number; values?: { count?: number } }>;
    };
    const reqs = summary.metrics?.http_reqs;
    const count = reqs?.count ?? reqs?.values?.count;
    return typeof count === 'number' ? count : undefined;
  } catch {
    return undefined;
  }
}
