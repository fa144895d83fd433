// A sweep's record carries the USL fitted to its goodput, beside the measured peak.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AnalysisResult, SweepRow, SweepVerdict } from '../contract/index.ts';
import { decideSweep, sweepAsVerdict } from './closed-sweep.ts';
import { fitUsl, sweepUslPoints, uslThroughput } from './fit/usl.ts';
import { renderSweepRecord } from './render-sweep.ts';
import { loadSweepTemplates } from './templates.ts';

const templates = await loadSweepTemplates();

function level(clients: number, goodput: number): SweepRow {
  return {
    step: `c${String(clients).padStart(3, '0')}`,
    clients,
    seconds: 10,
    attemptsPerSec: goodput,
    goodputPerSec: goodput,
    completedPerSec: goodput,
    expired: 0,
    timeouts: 0,
    shed: 0,
    retries: 0,
    latencyMs: { med: 50, p95: 90, mean: 60 },
    okP95Ms: 90,
    inRequests: { measured: clients, predicted: clients },
    server: { checkedOutPct: 100, waitingMean: 1, waitingMax: 2, cpuPct: 30 },
  };
}

/** The analysis of a sweep as analyze-sweep.ts makes it, with or without the fit (an older analysis.json). */
function analysisOf(rows: SweepRow[], withFit = true): AnalysisResult {
  const decided = decideSweep(rows, {
    recoveryVus: null,
    deadlineMs: 250,
    goodputBySecond: () => [],
    recoveryWindowS: null,
  });
  const verdict: SweepVerdict = withFit ? { ...decided, usl: fitUsl(sweepUslPoints(rows)) } : decided;
  return {
    kind: 'plateau.analysis',
    schemaVersion: 2,
    model: 'closed',
    runId: 'sweep-a',
    sources: { client: 'k6.csv.gz', server: 'server.json', manifest: null },
    objectives: { p95Ms: 250, failRate: 0.01 },
    table: [],
    verdict: sweepAsVerdict(verdict, []),
    sweep: { rows, verdict },
  };
}

test('the record shows σ, κ, the peak the law predicts and its R² under the measured peak', () => {
  // Goodput made by the law itself (λ 10/s, σ 0.05, κ 0.004): N* = √(0.95 ÷ 0.004) = 15.4,
  // X(N*) = 154.1 ÷ (1 + 0.05 × 14.4 + 0.004 × 15.4 × 14.4) = 59.1/s.
  const rows = [2, 4, 8, 12, 16, 20].map((n) =>
    level(n, uslThroughput(n, { lambdaPerSec: 10, sigma: 0.05, kappa: 0.004 })),
  );
  const record = renderSweepRecord(templates, analysisOf(rows), undefined);
  assert.match(record, /^goodput peak: {2}16 clients: /m);
  assert.match(
    record,
    /^usl fit: {7}σ 0\.05 \(contention\), κ 0\.004 \(coherency\), λ 10\/s for one client; peak 59\.1\/s at 15\.4 clients; R² 1\.000, residual 0\/s$/m,
  );
  // The fit's line follows the measured peak's.
  const labels = record.split('\n').map((l) => l.split(':')[0]);
  assert.equal(labels.indexOf('usl fit'), labels.indexOf('goodput peak') + 1);
});

test('two levels: the record says the law was not fitted and why', () => {
  const record = renderSweepRecord(templates, analysisOf([level(2, 19), level(10, 0.1)]), undefined);
  assert.match(
    record,
    /^usl fit: {7}not fitted: 2 levels of concurrency; its three coefficients need at least 3/m,
  );
});

test('a poor fit is warned on the line', () => {
  // Deadlines collapse goodput past 8 clients: not the law's retrograde.
  const rows = [level(2, 19), level(4, 38), level(8, 60), level(12, 10), level(16, 0.5), level(20, 0.1)];
  assert.match(
    renderSweepRecord(templates, analysisOf(rows), undefined),
    /^usl fit: .*; poor fit: R² 0\.\d+: the law explains little/m,
  );
});

test('an analysis written before the fit has no usl line', () => {
  const record = renderSweepRecord(templates, analysisOf([level(2, 19), level(4, 38)], false), undefined);
  assert.doesNotMatch(record, /usl fit/);
});
