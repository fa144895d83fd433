// Small saturation rows, published resources and timelines for the verdict rules' unit tests.
import type {
  FailureCounts,
  ResourceStepFigures,
  SaturationRow,
  TimelinePoint,
} from '../../contract/index.ts';
import type { VerdictInputs } from './inputs.ts';
import type { PlateauFound } from './plateau.ts';

/** The server figures of a quiet step of plateau's own service (GET /steps), with `overrides`. */
export function serverFigures(
  overrides: Partial<NonNullable<SaturationRow['server']>> = {},
): NonNullable<SaturationRow['server']> {
  return {
    checkedOutPct: 20,
    eventLoopUtilization: 0.2,
    waitingMean: 0,
    waitingMax: 0,
    waitP95Ms: 0.3,
    queryP95Ms: 51,
    cpuPct: 20,
    ...overrides,
  };
}

/** No failures of any class, with `overrides`. */
export function failures(overrides: Partial<FailureCounts> = {}): FailureCounts {
  return {
    shed: 0,
    rateLimited: 0,
    serverErrors: 0,
    clientErrors: 0,
    timeouts: 0,
    networkErrors: 0,
    ...overrides,
  };
}

/**
 * A rate step `r<offered>` of 20 s that sent what it offered and served `served`/s, with
 * quiet server figures, p95 60 ms, no failures, drops or generator trouble; `extra`
 * replaces any field (`server: null` for a service without GET /steps).
 */
export function rateRow(offered: number, served: number, extra: Partial<SaturationRow> = {}): SaturationRow {
  return {
    step: `r${String(offered).padStart(3, '0')}`,
    offeredPerSec: offered,
    sentPerSec: offered,
    servedPerSec: served,
    servedSource: 'server',
    seconds: 20,
    requests: offered * 20,
    latencyMs: { med: 55, p95: 60, p99: 70, max: 90 },
    failures: failures(),
    failureRate: 0,
    dropped: 0,
    generator: { lagMsMax: 2, cpuPctMax: 20 },
    server: serverFigures(),
    invalid: null,
    ...extra,
  };
}

/**
 * A published resource's figures at one step: nothing but what `figures` gives, and its
 * utilisation derived from in use ÷ capacity.
 */
export function resourceFigures(
  name: string,
  kind: ResourceStepFigures['kind'],
  role: ResourceStepFigures['role'],
  figures: Partial<ResourceStepFigures> = {},
): ResourceStepFigures {
  const inUseMean = figures.inUseMean ?? null;
  const capacity = figures.capacity ?? null;
  return {
    id: name,
    name,
    kind,
    role,
    position: 0,
    seconds: 20,
    inUseMean,
    inUseMax: inUseMean,
    capacity,
    utilisationPct:
      inUseMean !== null && capacity !== null && capacity > 0 ? (inUseMean / capacity) * 100 : null,
    waitingMean: null,
    waitingMax: null,
    waitMsMean: null,
    holdMsMean: null,
    refused: null,
    acquiredPerSec: null,
    ...figures,
  };
}

/**
 * The plateau at `rows[index]` as findPlateau shapes it, built by hand so that a rule is
 * tested without the plateau rule; `servedPerSec` defaults to the plateau row's.
 */
export function plateauAt(rows: SaturationRow[], index: number, servedPerSec?: number): PlateauFound {
  const row = rows[index]!;
  return {
    row,
    index,
    beyond: rows.slice(index),
    servedPerSec: servedPerSec ?? row.servedPerSec,
    baseline: rows[0]!,
    knee: index > 0 ? rows[index - 1] : undefined,
  };
}

/**
 * Server timeline seconds from epoch second `startT`, one per waiting mean, labelled
 * `step`; `extra` is added to every second.
 */
export function timelineSeconds(
  step: string,
  startT: number,
  waitingMeans: number[],
  extra: Partial<TimelinePoint> = {},
): TimelinePoint[] {
  return waitingMeans.map((waitingMean, i) => ({
    t: startT + i,
    step,
    served: 50,
    shed: 0,
    checkedOutMean: 1,
    waitingMean,
    waitingMax: Math.ceil(waitingMean),
    cpuPct: 20,
    ...extra,
  }));
}

/** Verdict inputs over `rows` with no server settings, timeline or database; p95 under 250 ms, under 1 % failing. */
export function verdictInputs(rows: SaturationRow[], overrides: Partial<VerdictInputs> = {}): VerdictInputs {
  return {
    rows,
    settings: null,
    timeline: [],
    objectives: { p95Ms: 250, failRate: 0.01 },
    database: null,
    recoveryRatePerSec: 50,
    ...overrides,
  };
}
