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
}

/** The plateau moves when it changes by at least this factor. */
const MOVED = 1.2;

function settings(manifest: RunManifest | undefined): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  if (!manifest) return out;
  for (const [key, value] of Object.entries(manifest.service ?? {})) out[key] = value;
  out.steps = manifest.load.stepsPerSec.join(',');
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
  const pa = a.analysis.verdict.plateau?.servedPerSec ?? null;
  const pb = b.analysis.verdict.plateau?.servedPerSec ?? null;
  // Without a plateau in B, the best served rate is a lower bound of the new ceiling.
  const servedB =
    pb ?? Math.max(0, ...b.analysis.table.filter((r) => r.offeredPerSec !== null).map((r) => r.servedPerSec));
  const ratio = pa && servedB ? Math.round((servedB / pa) * 100) / 100 : null;
  const limitBefore = a.analysis.verdict.firstLimit.resource;
  const limitAfter = b.analysis.verdict.firstLimit.resource;
  const serviceChanges = changes.filter(
    (c) => !['steps', 'holdSeconds', 'rampSeconds', 'engine'].includes(c.key),
  );
  let confirmedBy: string | null = null;
  if (serviceChanges.length === 1 && ratio !== null && ratio >= MOVED) {
    const c = serviceChanges[0]!;
    confirmedBy = `${c.key} ${c.before} -> ${c.after} alone moved the plateau to ${Math.round(servedB * 10) / 10}/s${pb === null ? ' or more' : ''} (${ratio.toFixed(1)}x)`;
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
          : `${serviceChanges[0]!.key} alone did not move the plateau (${ratio ?? '?'}x): ${limitBefore} was not the limit, or another resource limits next`;
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

/** The comparison as text for the terminal. */
export function renderComparison(c: RunComparison): string {
  const fmt = (x: number | null) => (x === null ? '–' : String(Math.round(x * 10) / 10));
  const lines = [
    `changed:       ${c.changes.length === 0 ? 'nothing' : c.changes.map((x) => `${x.key} ${x.before} -> ${x.after}`).join(', ')}`,
    `plateau:       ${fmt(c.plateauBefore)}/s -> ${fmt(c.plateauAfter)}/s${c.ratio === null ? '' : ` (${c.ratio}x)`}`,
    `first limit:   ${c.limitBefore} -> ${c.limitAfter}${c.sameLimit ? ' (same resource)' : ''}`,
    `verdict:       ${c.summary}`,
    '',
    `${'step'.padEnd(10)}${'served A'.padStart(10)}${'served B'.padStart(10)}${'p95 A'.padStart(10)}${'p95 B'.padStart(10)}`,
    ...c.rows.map(
      (r) =>
        `${r.step.padEnd(10)}${fmt(r.servedBefore).padStart(10)}${fmt(r.servedAfter).padStart(10)}${fmt(r.p95Before).padStart(10)}${fmt(r.p95After).padStart(10)}`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
