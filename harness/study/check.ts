// The CI gate: a short constant-rate run at the recorded safe limit, judged by thresholds.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { analyzePath } from '../../analysis/analyze-run.ts';
import {
  ERROR_CODES,
  LOAD_FINISHED_CODES,
  PlateauError,
  type RunManifest,
  type StudyRequest,
} from '../../contract/index.ts';
import { writeFileAtomic } from '../../lib/atomic-write.ts';
import { parseServiceConfig } from '../../target-service/config.ts';
import { buildK6Scripts } from '../build-scripts.ts';
import { stopChild } from './child.ts';
import { vetK6Binary } from './k6-binary.ts';
import { LiveFigures, loadStarted, progressFromSample, STARTING_PHASE } from './live-figures.ts';
import { freeLoopbackPort, LoadApiClient } from './load-api.ts';
import type { StudyProgress } from './progress-line.ts';
import { requestEnv } from './request-options.ts';
import { createRunDir } from './run-dir.ts';
import { scriptEntry } from './study-options.ts';
import {
  fetchSteps,
  loadFailure,
  type ReferenceTarget,
  resetSteps,
  startLoad,
  startReferenceTarget,
} from './target.ts';

/** A validated check. */
export interface CheckPlan {
  ratePerSec: number;
  durationSeconds: number;
  p95Ms: number;
  failRate: number;
  /** Reference-service settings, or empty with `target` set. */
  service: Record<string, string>;
  target: string | undefined;
  /** The request to send: the flags', else the recorded study's. */
  request: StudyRequest;
  /** `constant-rate` (plateau's) or the absolute path of your own script, run in check mode. */
  script: string;
  engine: 'embedded' | 'k6';
  k6Bin: string;
  /** The embedded engine's worker processes (`--workers`), or undefined to run it in one. */
  workers?: number;
  db: string;
  out: string;
}

/** One threshold's result, as JUnit reports it. */
export interface ThresholdResult {
  metric: string;
  expression: string;
  failed: boolean;
  value: number | undefined;
}

/** How a check ended. */
export interface CheckResult {
  exitCode: number;
  runDir: string;
  thresholds: ThresholdResult[];
  durationSeconds: number;
}

/**
 * Reads the safe limit (and the run's service settings and objectives) from an
 * analysis.json or a run directory holding one.
 */
export async function readRecordedLimit(path: string): Promise<{
  ratePerSec: number;
  service: Record<string, string> | null;
  p95Ms: number;
  failRate: number;
  /** The request the recorded study sent (absent in runs made before it could be chosen). */
  request: StudyRequest | undefined;
  /** The recorded study's own target, when it was not the reference service. */
  target: string | undefined;
  /** Your own script, when the recorded study ran one. */
  script: string | undefined;
}> {
  const isDir = await stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
  const analysisPath = isDir ? join(path, 'analysis.json') : path;
  let analysis: {
    kind?: string;
    verdict?: { safeLimit?: { ratePerSec?: number | null } };
    objectives?: { p95Ms: number; failRate: number };
  };
  try {
    analysis = JSON.parse(await readFile(analysisPath, 'utf8'));
  } catch (error) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `cannot read the record ${analysisPath}: ${(error as Error).message}`,
      {
        hint: 'pass --record runs/<id> (or its analysis.json), or an explicit --rate',
        cause: error,
      },
    );
  }
  if ((analysis as { model?: string }).model === 'closed') {
    throw new PlateauError(ERROR_CODES.INPUT, `${analysisPath} is a closed-model sweep`, {
      hint: 'a sweep records a goodput peak in clients, not a safe rate: check against the record of a rate study (plateau run), or pass --rate',
    });
  }
  const rate = analysis.verdict?.safeLimit?.ratePerSec;
  if (analysis.kind !== 'plateau.analysis' || typeof rate !== 'number' || rate <= 0) {
    throw new PlateauError(ERROR_CODES.INPUT, `${analysisPath} records no safe limit`, {
      hint: 'the study found no step within the objectives; pass an explicit --rate',
    });
  }
  let service: Record<string, string> | null = null;
  let manifest: Partial<RunManifest> | undefined;
  if (isDir) {
    manifest = await readFile(join(path, 'run.json'), 'utf8').then(
      (t) => JSON.parse(t) as Partial<RunManifest>,
      () => undefined,
    );
    if (manifest?.service) {
      service = Object.fromEntries(
        Object.entries(manifest.service as Record<string, unknown>).map(([k, v]) => [
          k,
          typeof v === 'boolean' ? (v ? 'on' : 'off') : String(v),
        ]),
      );
    }
  }
  return {
    ratePerSec: rate,
    service,
    p95Ms: analysis.objectives?.p95Ms ?? 250,
    failRate: analysis.objectives?.failRate ?? 0.01,
    request: manifest?.request,
    target: manifest?.service === null && typeof manifest.target === 'string' ? manifest.target : undefined,
    script: manifest?.load?.script && manifest.load.script !== 'capacity' ? manifest.load.script : undefined,
  };
}

/**
 * Runs the constant-rate check; exit 0 when every threshold holds, 99 when one is crossed.
 * `onProgress` gets the phases, then a load snapshot each second (as the study's).
 */
export async function runCheck(
  plan: CheckPlan,
  options: { signal?: AbortSignal; onProgress?: (p: StudyProgress) => void } = {},
): Promise<CheckResult> {
  const report = options.onProgress ?? (() => undefined);
  const progress = (phase: string) => report({ phase });
  if (plan.engine === 'k6') vetK6Binary(plan.k6Bin);
  const { dir } = await createRunDir(plan.out);
  let target: ReferenceTarget | undefined;
  let url = plan.target;
  try {
    // Bundled first: a script that does not build fails before the database and service start.
    progress('bundling the k6 script');
    const [script] = await buildK6Scripts({
      outDir: join(dir, 'script'),
      entries: [scriptEntry(plan.script, 'constant-rate')],
    });
    if (!url) {
      target = await startReferenceTarget({ db: plan.db, service: plan.service, dir, progress });
      url = target.url;
    }
    const body = plan.request.body;
    const bodyFile = body && 'text' in body ? join(dir, 'request-body') : undefined;
    if (bodyFile && body && 'text' in body) await writeFileAtomic(bodyFile, body.text);
    // The service's side of the check, for its report: pool, queue and CPU per second.
    await resetSteps(url);
    progress(`checking ${plan.ratePerSec}/s for ${plan.durationSeconds} s`);
    const vus = Math.max(10, Math.ceil(plan.ratePerSec / 2));
    report({ phase: STARTING_PHASE });
    const apiPort = await freeLoopbackPort();
    const { child, command } = startLoad({
      engine: plan.engine,
      k6Bin: plan.k6Bin,
      script: script!.outFile,
      env: {
        BASE_URL: url,
        RATE: String(plan.ratePerSec),
        DURATION: String(plan.durationSeconds),
        P95_MS: String(plan.p95Ms),
        FAIL_RATE: String(plan.failRate),
        PREALLOCATED_VUS: String(vus),
        MAX_VUS: String(vus * 10),
        ...requestEnv(plan.request, bodyFile),
        // Your own script's `plateau/k6` reads this: the check's constant rate, tagged `check`.
        PLATEAU_MODE: 'check',
      },
      csv: join(dir, 'k6.csv.gz'),
      summary: join(dir, 'summary.json'),
      dir,
      address: `127.0.0.1:${apiPort}`,
      ...(plan.workers !== undefined ? { workers: plan.workers } : {}),
    });
    const spawnedMs = Date.now();
    const onAbort = () => child.child.kill('SIGINT');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    // The service's live figures when it has them (the reference service does; a target may not).
    const live = new LiveFigures({ serviceUrl: url, load: new LoadApiClient(`http://127.0.0.1:${apiPort}`) });
    const poolMax = plan.target ? null : parseServiceConfig(plan.service).config.poolMax;
    live.start((sample) => {
      if (!loadStarted(sample)) return report({ phase: STARTING_PHASE });
      const elapsedSeconds = (Date.now() - (sample.runningSinceMs ?? spawnedMs)) / 1000;
      report(
        progressFromSample(sample, {
          step: 'check',
          offeredPerSec: plan.ratePerSec,
          secondsLeft: Math.max(0, Math.round(plan.durationSeconds - elapsedSeconds)),
          poolMax,
        }),
      );
    });
    const code = await child.exited;
    live.stop();
    options.signal?.removeEventListener('abort', onAbort);
    await stopChild(child);
    if (!LOAD_FINISHED_CODES.includes(code)) throw loadFailure(plan.engine, command, code, child);
    const thresholds = await thresholdResults(join(dir, 'summary.json'));
    const steps = await fetchSteps(url);
    if (steps) await writeFileAtomic(join(dir, 'server.json'), `${JSON.stringify(steps, null, 2)}\n`);
    // analysis.json, record.txt, table.md and report.html of the check, for a human to look
    // at what crossed a threshold; the check's result is its thresholds, not this analysis.
    await target?.stop();
    target = undefined;
    progress('analysing');
    await analyzePath(dir).catch((error: Error) => progress(`no report: ${error.message}`));
    return { exitCode: code, runDir: dir, thresholds, durationSeconds: plan.durationSeconds };
  } finally {
    await target?.stop();
  }
}

async function thresholdResults(summaryPath: string): Promise<ThresholdResult[]> {
  const summary = JSON.parse(await readFile(summaryPath, 'utf8')) as {
    metrics: Record<string, Record<string, unknown>>;
  };
  const results: ThresholdResult[] = [];
  for (const [metric, values] of Object.entries(summary.metrics)) {
    const thresholds = values.thresholds as Record<string, boolean> | undefined;
    for (const [expression, failed] of Object.entries(thresholds ?? {})) {
      const aggregation = expression.split(/[<>=!]/)[0]!.trim();
      const key = aggregation === 'rate' && 'value' in values ? 'value' : aggregation;
      results.push({
        metric,
        expression,
        failed,
        value: typeof values[key] === 'number' ? (values[key] as number) : undefined,
      });
    }
  }
  return results;
}

const xml = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JUnit XML: one test case per threshold, a failure for each crossed one. */
export function renderJunit(result: CheckResult, ratePerSec: number): string {
  const failures = result.thresholds.filter((t) => t.failed).length;
  const cases = result.thresholds.map((t) => {
    const name = xml(`${t.metric}: ${t.expression}`);
    const body = t.failed
      ? `\n      <failure message="${name} crossed (value ${t.value ?? '?'})" type="threshold"/>\n    `
      : '';
    return `    <testcase classname="plateau.check" name="${name}" time="0">${body}</testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="plateau check" tests="${result.thresholds.length}" failures="${failures}">`,
    `  <testsuite name="constant rate ${ratePerSec}/s for ${result.durationSeconds}s" tests="${result.thresholds.length}" failures="${failures}" time="${result.durationSeconds}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** Writes the JUnit report. */
export function writeJunit(path: string, result: CheckResult, ratePerSec: number): Promise<void> {
  return writeFileAtomic(path, renderJunit(result, ratePerSec));
}
