// Comparing two runs: what changed, the tables side by side, and whether the limit moved.
import type { AnalysisResult, RunManifest } from '../contract/index.ts';

/** A setting that differs between two runs. */
export interface SettingChange {
  key: string;
  before: string | number | boolean | null;
  after: string | number | boolean | null;
}

/** The comparison of run B against run A. */
export interface RunComparison {
  changes: SettingChange[];
  plateauBefore: number | null;
  plateauAfter: number | null;
  /** plateauAfter ÷ plateauBefore. */
  ratio: number | null;
  limitBefore: string;
  limitAfter: string;
  sameLimit: boolean;
  /** The "confirmed by" line, when exactly one setting changed and the plateau moved. */
  confirmedBy: string | null;
  /** Rows of both tables by step, for printing side by side. */
  rows: {
    step: string;
    servedBefore: number | null;
    servedAfter: number | null;
    p95Before: number | null;
    p95After: number | null;
  }[];
  summary: string;
  /** What plateauBefore/After measure, when not the plateau (a sweep's goodput at its top level). */
  measure?: string;
}

/** The plateau moves when it changes by at least this factor. */
const MOVED = 1.2;
/** …or by this much when the first limit passed to another resource with it. */
const HANDED_ON = 1.05;

function settings(manifest: RunManifest | undefined): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  if (!manifest) return out;
  for (const [key, value] of Object.entries(manifest.service ?? {})) out[key] = value;
  // The env of the user's service plateau started: what `confirm --set` changes for it.
  for (const [key, entry] of Object.entries(manifest.serviceProcess?.env ?? {})) out[key] = entry.value;
  out.steps = manifest.load.stepsPerSec.join(',');
  if (manifest.load.model === 'closed') {
    out.vusLevels = (manifest.load.vusLevels ?? []).join(',');
    out.retries = manifest.load.retries ?? 0;
    out.recoveryVus = manifest.load.recoveryVus ?? 0;
  }
  if (manifest.load.timeoutSeconds !== undefined) out.timeoutSeconds = manifest.load.timeoutSeconds;
  out.holdSeconds = manifest.load.holdSeconds;
  out.rampSeconds = manifest.load.rampSeconds;
  out.jitterSeconds = manifest.load.jitterSeconds;
  out.engine = manifest.engine.name;
  out.target = manifest.target;
  return out;
}

/**
 * Compares run B with run A. A hypothesis stands only when changing that resource alone
 * moves the plateau: with one service setting changed, a plateau ratio of at least 1.2×
 * and the first limit of A being the resource that setting sizes, the confirming line is
 * "<KEY> <a> -> <b> alone moved the plateau to <N>/s (<ratio>x)".
 */
export function compareRuns(
  a: { analysis: AnalysisResult; manifest: RunManifest | undefined },
  b: { analysis: AnalysisResult; manifest: RunManifest | undefined },
): RunComparison {
  const before = settings(a.manifest);
  const after = settings(b.manifest);
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const changes = keys
    .filter((k) => String(before[k] ?? '') !== String(after[k] ?? ''))
    .map((key) => ({ key, before: before[key] ?? null, after: after[key] ?? null }));
  const closedA = a.analysis.model === 'closed';
  const closedB = b.analysis.model === 'closed';
  if (closedA || closedB) return compareSweeps(a.analysis, b.analysis, changes, closedA && closedB);
  const pa = a.analysis.verdict.plateau?.servedPerSec ?? null;
  const pb = b.analysis.verdict.plateau?.servedPerSec ?? null;
  // Without a plateau in B, the best served rate is a lower bound of the new ceiling.
  const servedB =
    pb ?? Math.max(0, ...b.analysis.table.filter((r) => r.offeredPerSec !== null).map((r) => r.servedPerSec));
  const ratio = pa && servedB ? Math.round((servedB / pa) * 100) / 100 : null;
  const limitBefore = limitLabel(a.analysis);
  const limitAfter = limitLabel(b.analysis);
  const serviceChanges = changes.filter((c) => !LOAD_KEYS.includes(c.key));
  let confirmedBy: string | null = null;
  const only = serviceChanges.length === 1 ? serviceChanges[0]! : undefined;
  const sized = only ? sizedBy(only.key, a.analysis, b.analysis) : undefined;
  // A smaller move confirms too when it handed the first limit to the next resource: the
  // plateau rose until that one bound (a second limit in series right behind the first).
  const handedOn =
    only !== undefined &&
    ratio !== null &&
    ratio >= HANDED_ON &&
    sized === limitBefore &&
    limitAfter !== limitBefore &&
    !['none', 'unlisted', 'generator', 'inconclusive'].includes(b.analysis.verdict.firstLimit.resource);
  if (only && ratio !== null && (ratio >= MOVED || handedOn)) {
    confirmedBy = `${only.key} ${only.before} -> ${only.after} alone moved the plateau to ${Math.round(servedB * 10) / 10}/s${pb === null ? ' or more' : ''} (${ratio >= MOVED ? ratio.toFixed(1) : ratio.toFixed(2)}x)${handedOn && ratio < MOVED ? `, where the ${limitAfter} became the first limit` : ''}`;
  }
  const steps = [
    ...new Set([...a.analysis.table.map((r) => r.step), ...b.analysis.table.map((r) => r.step)]),
  ];
  const rows = steps.map((step) => {
    const ra = a.analysis.table.find((r) => r.step === step);
    const rb = b.analysis.table.find((r) => r.step === step);
    return {
      step,
      servedBefore: ra?.servedPerSec ?? null,
      servedAfter: rb?.servedPerSec ?? null,
      p95Before: ra?.latencyMs.p95 ?? null,
      p95After: rb?.latencyMs.p95 ?? null,
    };
  });
  const summary =
    serviceChanges.length === 0
      ? 'no service setting differs: a repeat of the same configuration'
      : serviceChanges.length > 1
        ? `${serviceChanges.length} service settings differ (${serviceChanges.map((c) => c.key).join(', ')}): change one at a time to confirm a limit`
        : confirmedBy
          ? `confirmed: ${confirmedBy}`
          : didNotMove(serviceChanges[0]!.key, ratio, limitBefore, sized);
  return {
    changes,
    plateauBefore: pa,
    plateauAfter: pb,
    ratio,
    limitBefore,
    limitAfter,
    sameLimit: limitBefore === limitAfter,
    confirmedBy,
    rows,
    summary,
  };
}

/** The resource each reference-service setting sizes. */
const SIZES: Record<string, string> = {
  POOL_MAX: 'pool',
  QUEUE_MAX: 'pool',
  ACQUIRE_TIMEOUT_MS: 'pool',
  CPU_MS: 'cpu',
  PAYLOAD_KB: 'cpu',
  RENDER_FIRST: 'cpu',
  QUERY_MS: 'database',
  ADMISSION: 'admission',
  ADMISSION_HIGH_MS: 'admission',
  ADMISSION_LOW_MS: 'admission',
  ADMISSION_HIGH_PCT: 'admission',
  ADMISSION_LOW_PCT: 'admission',
};

/** The first limit as compare names it: the published resource's own name, else the verdict's word. */
function limitLabel(analysis: AnalysisResult): string {
  return analysis.verdict.firstLimit.name ?? analysis.verdict.firstLimit.resource;
}

/**
 * The resource a setting sizes: the reference service's settings by name (SIZES); for a
 * service plateau did not write, whose env names plateau cannot know, the published
 * resource whose capacity differs between the two runs' first rate steps (POOL_MAX 4 -> 8
 * shows as `hikaricp pool orders` 4 -> 8 connections), when exactly one does.
 */
function sizedBy(key: string, a: AnalysisResult, b: AnalysisResult): string | undefined {
  if (SIZES[key] !== undefined) return SIZES[key];
  const first = (analysis: AnalysisResult) =>
    analysis.table.find((r) => r.offeredPerSec !== null && (r.resources?.length ?? 0) > 0)?.resources ?? [];
  const after = new Map(first(b).map((f) => [f.name, f.capacity]));
  const moved = first(a).filter(
    (f) => f.capacity !== null && after.get(f.name) != null && after.get(f.name) !== f.capacity,
  );
  return moved.length === 1 ? moved[0]!.name : undefined;
}

/**
 * Why one change did not move the plateau. When the setting sizes another resource than the
 * first limit, that is what the first limit predicts (raising the wrong one moves nothing);
 * when it sizes the named limit, the verdict is in doubt.
 */
function didNotMove(
  key: string,
  ratio: number | null,
  limitBefore: string,
  sized: string | undefined,
): string {
  const head = `${key} alone did not move the plateau (${ratio ?? '?'}x)`;
  if (sized === undefined) return `${head}: ${key} does not size ${limitBefore}, the first limit`;
  if (sized !== limitBefore)
    return `${head}, as the first limit predicts: it sizes the ${sized}, and the first limit is ${limitBefore}`;
  return `${head}: the ${sized} was not the limit after all, or another resource limits right behind it`;
}

/** Settings of the load rather than of the service: a change to them confirms no limit. */
const LOAD_KEYS = [
  'steps',
  'holdSeconds',
  'rampSeconds',
  'engine',
  'vusLevels',
  'recoveryVus',
  'retries',
  'timeoutSeconds',
];

/**
 * Two closed-model sweeps: goodput level by level, and at the most clients both ran (where
 * a collapse shows). A sweep and a rate study measure different things and are not compared.
 */
function compareSweeps(
  a: AnalysisResult,
  b: AnalysisResult,
  changes: SettingChange[],
  bothClosed: boolean,
): RunComparison {
  const limitBefore = a.verdict.firstLimit.resource;
  const limitAfter = b.verdict.firstLimit.resource;
  const base = { changes, limitBefore, limitAfter, sameLimit: limitBefore === limitAfter, confirmedBy: null };
  if (!bothClosed) {
    return {
      ...base,
      plateauBefore: null,
      plateauAfter: null,
      ratio: null,
      rows: [],
      summary: 'one run is a closed-model sweep and the other a rate study: they measure different things',
    };
  }
  const rowsA = a.sweep?.rows ?? [];
  const rowsB = b.sweep?.rows ?? [];
  const steps = [...new Set([...rowsA.map((r) => r.step), ...rowsB.map((r) => r.step)])];
  const rows = steps.map((step) => {
    const ra = rowsA.find((r) => r.step === step);
    const rb = rowsB.find((r) => r.step === step);
    return {
      step,
      servedBefore: ra?.goodputPerSec ?? null,
      servedAfter: rb?.goodputPerSec ?? null,
      p95Before: ra?.latencyMs.p95 ?? null,
      p95After: rb?.latencyMs.p95 ?? null,
    };
  });
  const common = rows.filter(
    (r) => r.step !== 'recovery' && r.servedBefore !== null && r.servedAfter !== null,
  );
  const top = common.at(-1);
  const ga = top?.servedBefore ?? null;
  const gb = top?.servedAfter ?? null;
  const ratio = ga && gb ? Math.round((gb / ga) * 100) / 100 : null;
  const serviceChanges = changes.filter((c) => !LOAD_KEYS.includes(c.key));
  const fmt = (x: number | null) => (x === null ? '–' : String(Math.round(x * 10) / 10));
  const at = top
    ? `goodput at ${top.step.replace(/^c0*/, '')} clients ${fmt(ga)}/s -> ${fmt(gb)}/s`
    : 'no level in common';
  const summary =
    serviceChanges.length === 0
      ? `no service setting differs; ${at}`
      : `${serviceChanges.map((c) => `${c.key} ${c.before} -> ${c.after}`).join(', ')}: ${at}`;
  return {
    ...base,
    plateauBefore: ga,
    plateauAfter: gb,
    ratio,
    rows,
    summary,
    ...(top ? { measure: `goodput ${top.step}` } : {}),
  };
}

/** The comparison as text for the terminal. */
export function renderComparison(c: RunComparison): string {
  const fmt = (x: number | null) => (x === null ? '–' : String(Math.round(x * 10) / 10));
  const lines = [
    `changed:       ${c.changes.length === 0 ? 'nothing' : c.changes.map((x) => `${x.key} ${x.before} -> ${x.after}`).join(', ')}`,
    `${`${c.measure ?? 'plateau'}:`.padEnd(15)}${fmt(c.plateauBefore)}/s -> ${fmt(c.plateauAfter)}/s${c.ratio === null ? '' : ` (${c.ratio}x)`}`,
    `first limit:   ${c.limitBefore} -> ${c.limitAfter}${c.sameLimit ? ' (same resource)' : ''}`,
    `verdict:       ${c.summary}`,
    '',
    `${'step'.padEnd(10)}${(c.measure ? 'goodput A' : 'served A').padStart(10)}${(c.measure ? 'goodput B' : 'served B').padStart(10)}${'p95 A'.padStart(10)}${'p95 B'.padStart(10)}`,
    ...c.rows.map(
      (r) =>
        `${r.step.padEnd(10)}${fmt(r.servedBefore).padStart(10)}${fmt(r.servedAfter).padStart(10)}${fmt(r.p95Before).padStart(10)}${fmt(r.p95After).padStart(10)}`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
