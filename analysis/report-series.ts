// The report's charts as data: per-second series of one run on a shared time axis. Pure.
import type {
  AnalysisResult,
  GeneratorCpuReport,
  OnFull,
  ResourceKind,
  ResourceRole,
  ResourceSeries,
  ResourcesReport,
  RunManifest,
  SaturationRow,
  ServerStepReport,
} from '../contract/index.ts';
import type { ClientSecond } from './second-series.ts';

/** One line of a chart. `scale` `y2` draws it against the right-hand axis. */
export interface ChartSeriesSpec {
  /** A run's series, or (with `resource`) a field of that resource's line. */
  key: SeriesKey | ResourceField;
  /** The id of the published resource (`ResourceLine.id`) whose `key` this line draws. */
  resource?: string;
  label: string;
  /** A colour of the page's palette (CSS variables --c-<name>, light and dark). */
  color: 'grey' | 'blue' | 'green' | 'orange' | 'purple' | 'red' | 'teal';
  scale?: 'y' | 'y2';
  /** A limit (pool max, queue cap): drawn dashed. */
  limit?: boolean;
}

/** One chart of the report. */
export interface ChartSpec {
  id: string;
  title: string;
  /** What the reader needs to know to read it. */
  caption: string;
  yLabel: string;
  y2Label?: string;
  /**
   * The right-hand axis reaches this multiple of its highest value (default 1.08, as the
   * left's). A resource's wait time rises with its waiting callers, each the highest on its
   * own axis: more room on the right keeps the two lines apart.
   */
  y2Headroom?: number;
  series: ChartSeriesSpec[];
  /** The chart of the resource the verdict named the first limit: drawn first and marked. */
  firstLimit?: boolean;
}

/** Every series a run carries, one value per second of its time axis (null: not measured). */
export const SERIES_KEYS = [
  'offered',
  'sent',
  'served',
  'shed',
  'expired',
  'p50',
  'p95',
  'p99',
  'checkedOut',
  'poolMax',
  'waitingMean',
  'waitingMax',
  'queueMax',
  'cpu',
  'elu',
  'genCpu',
  'machineCpu',
  'lagMs',
  'dropped',
  'vus',
] as const;
export type SeriesKey = (typeof SERIES_KEYS)[number];

/** The charts, top to bottom. */
export const REPORT_CHARTS: ChartSpec[] = [
  {
    id: 'throughput',
    title: 'Throughput',
    caption:
      "offered: the plan's arrival rate; sent: requests started, by send time; served: successes completed in each second (the service's own count when it answers GET /steps, else the client's 2xx); shed: 503 refusals; expired: 504 answers to requests whose deadline had passed.",
    yLabel: 'requests/s',
    series: [
      { key: 'offered', label: 'offered/s', color: 'grey' },
      { key: 'sent', label: 'sent/s', color: 'blue' },
      { key: 'served', label: 'served/s', color: 'green' },
      { key: 'shed', label: 'shed/s', color: 'orange' },
      { key: 'expired', label: 'expired/s', color: 'purple' },
    ],
  },
  {
    id: 'latency',
    title: 'Client latency',
    caption: 'Percentiles of the responses that completed in each second, as the load generator saw them.',
    yLabel: 'ms',
    series: [
      { key: 'p50', label: 'p50 ms', color: 'green' },
      { key: 'p95', label: 'p95 ms', color: 'blue' },
      { key: 'p99', label: 'p99 ms', color: 'purple' },
    ],
  },
  {
    id: 'pool',
    title: 'Connection pool',
    caption: 'Connections checked out, time-weighted mean per second, against the pool max.',
    yLabel: 'connections',
    series: [
      { key: 'checkedOut', label: 'checked out', color: 'blue' },
      { key: 'poolMax', label: 'pool max', color: 'red', limit: true },
    ],
  },
  {
    id: 'waiting',
    title: 'Waiting for a connection',
    caption:
      'Requests waiting for a pool connection: time-weighted mean and maximum per second, against the wait-queue cap.',
    yLabel: 'requests',
    series: [
      { key: 'waitingMean', label: 'waiting, mean', color: 'blue' },
      { key: 'waitingMax', label: 'waiting, max', color: 'orange' },
      { key: 'queueMax', label: 'queue cap', color: 'red', limit: true },
    ],
  },
  {
    id: 'cpu',
    title: 'Service CPU and event loop',
    caption:
      "The service process's CPU per second (% of one core); event-loop utilisation is measured per step, so it is drawn as a step function over each step's window.",
    yLabel: '%',
    series: [
      { key: 'cpu', label: 'CPU %', color: 'blue' },
      { key: 'elu', label: 'event loop busy % (per step)', color: 'teal' },
    ],
  },
  {
    id: 'generator',
    title: 'Load generator health',
    caption:
      "The generator's own CPU (% of what it can use) and the machine's, its event-loop lag, and the iterations it could not start (dropped). A generator that cannot keep up makes the rows it touched worthless as evidence.",
    yLabel: '%',
    y2Label: 'ms, starts/s, VUs',
    series: [
      { key: 'genCpu', label: 'generator CPU %', color: 'blue' },
      { key: 'machineCpu', label: 'machine CPU %', color: 'grey' },
      { key: 'lagMs', label: 'lag ms', color: 'orange', scale: 'y2' },
      { key: 'dropped', label: 'dropped/s', color: 'red', scale: 'y2' },
      { key: 'vus', label: 'VUs', color: 'purple', scale: 'y2' },
    ],
  },
];

/** A step's window on the chart's axis, to shade and label. */
export interface StepBand {
  step: string;
  startS: number;
  endS: number;
  /** The plateau's step (the knee). */
  plateau: boolean;
  /** The row is not evidence (dropped starts, a saturated generator). */
  invalid: boolean;
}

/** One run's series: x in seconds since the load began (`t0`, epoch s). */
export interface RunSeries {
  /** '' for a single run; 'A' and 'B' in a comparison. */
  label: string;
  runId: string | null;
  t0: number;
  x: number[];
  values: Record<SeriesKey, (number | null)[]>;
  bands: StepBand[];
  /** The published resources (resources.json), each on its own seconds; absent without any. */
  resources?: ResourceLine[];
}

/** The figures of a resource's second that its chart draws (contract/resources.ts ResourceSecond). */
export const RESOURCE_FIELDS = ['inUse', 'capacity', 'waiting', 'waitMs'] as const;
export type ResourceField = (typeof RESOURCE_FIELDS)[number];

/**
 * One published resource as its chart draws it: only the seconds it had readings in within
 * the run's axis (`x`, seconds since the load began), and only the figures its meters give
 * (a field no second had is absent), so the page carries a resource's seconds and no more.
 */
export interface ResourceLine {
  /** ResourceSeries.id: the same resource in two runs of a comparison. */
  id: string;
  name: string;
  kind: ResourceKind;
  role: ResourceRole;
  family: string;
  source: string;
  onFull: OnFull;
  /** The verdict named it the first limit (`verdict.firstLimit.name`). */
  firstLimit: boolean;
  x: number[];
  values: Partial<Record<ResourceField, (number | null)[]>>;
}

/** What the series are built from besides analysis.json and run.json. */
export interface SeriesSources {
  clientSeconds: readonly ClientSecond[];
  server: ServerStepReport | undefined;
  generator: GeneratorCpuReport | undefined;
  /** resources.json: the service's published resources (absent: the run read no meters). */
  resources?: ResourcesReport | undefined;
}

/**
 * The arrival rate the plan asked for `elapsedS` after the scenario began, requests/s:
 * each step ramps linearly from the previous rate (0 before the first) over `rampSeconds`,
 * then holds; after the last, 1 s down to the recovery rate, held for the rest of the
 * recovery (scripts/lib/steps.ts rampStages). Null outside the scenario.
 */
export function plannedRate(load: RunManifest['load'], elapsedS: number): number | null {
  if (elapsedS < 0) return null;
  const hold = load.holdSeconds;
  const index = Math.floor(elapsedS / hold);
  const rates = load.stepsPerSec;
  if (index < rates.length) {
    const into = elapsedS - index * hold;
    const to = rates[index]!;
    const from = index === 0 ? 0 : rates[index - 1]!;
    return into < load.rampSeconds ? from + ((to - from) * into) / load.rampSeconds : to;
  }
  const after = elapsedS - rates.length * hold;
  if (after >= load.recoverySeconds) return null;
  const last = rates.at(-1) ?? 0;
  return after < 1 ? last + (load.recoveryRatePerSec - last) * after : load.recoveryRatePerSec;
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The row whose window holds `atS` (epoch s). */
function rowAt(rows: readonly SaturationRow[], atS: number): SaturationRow | undefined {
  return rows.find((r) => r.window && atS >= r.window.startS && atS < r.window.endS);
}

/**
 * Lays one run's client seconds, the service's timeline and generator.json on one axis:
 * seconds since the load began (the first rate step's window, else the first second seen).
 * Whole epoch seconds of both clocks are matched as they are; on one machine they differ
 * by milliseconds (the analysis notes when they differ by a second or more).
 */
export function buildRunSeries(
  analysis: AnalysisResult,
  manifest: RunManifest | undefined,
  sources: SeriesSources,
  label = '',
): RunSeries {
  const rows = analysis.table;
  const windowed = rows.filter((r) => r.window);
  const firstRate = windowed.find((r) => r.offeredPerSec !== null);
  const client = sources.clientSeconds;
  const timeline = sources.server?.timeline ?? [];
  const t0Exact =
    firstRate?.window?.startS ?? windowed[0]?.window?.startS ?? client[0]?.t ?? timeline[0]?.t ?? 0;
  const t0 = Math.floor(t0Exact);
  // The axis spans what the client saw; the service's timeline only within it (it also
  // holds idle seconds before and after the load).
  const from = client[0]?.t ?? timeline[0]?.t ?? t0;
  const to = client.at(-1)?.t ?? timeline.at(-1)?.t ?? t0;
  const seconds: number[] = [];
  for (let t = from; t <= to; t++) seconds.push(t);

  const byT = <T extends { t: number }>(list: readonly T[]) => new Map(list.map((p) => [p.t, p]));
  const clientAt = byT(client);
  const serverAt = byT(timeline);
  const generatorAt = byT(sources.generator?.seconds ?? []);
  const hasServer = timeline.length > 0;
  const settings = sources.server?.settings;
  const anyExpired = timeline.some((p) => p.expired !== undefined);

  const values = Object.fromEntries(SERIES_KEYS.map((key) => [key, [] as (number | null)[]])) as Record<
    SeriesKey,
    (number | null)[]
  >;
  for (const t of seconds) {
    const c = clientAt.get(t);
    const s = serverAt.get(t);
    const g = generatorAt.get(t);
    const middle = t + 0.5;
    const row = rowAt(rows, middle);
    // A closed-model sweep offers no rate: its levels are clients (the step bands name them).
    const closed = manifest?.load.model === 'closed';
    const planned = manifest && !closed ? plannedRate(manifest.load, middle - t0Exact) : null;
    values.offered.push(planned !== null ? round(planned) : manifest ? null : (row?.offeredPerSec ?? null));
    values.sent.push(c ? c.sent : null);
    values.served.push(hasServer ? (s ? s.served : null) : c ? c.served : null);
    values.shed.push(hasServer ? (s ? s.shed : null) : c ? c.shed : null);
    // The service counts 504s in its timeline once it reports them; until then the series is empty.
    values.expired.push(hasServer ? (anyExpired && s ? (s.expired ?? 0) : null) : c ? c.expired : null);
    values.p50.push(c?.p50Ms ?? null);
    values.p95.push(c?.p95Ms ?? null);
    values.p99.push(c?.p99Ms ?? null);
    values.checkedOut.push(s ? s.checkedOutMean : null);
    values.poolMax.push(hasServer ? (settings?.poolMax ?? null) : null);
    values.waitingMean.push(s ? s.waitingMean : null);
    values.waitingMax.push(s ? s.waitingMax : null);
    values.queueMax.push(hasServer ? (settings?.queueMax ?? null) : null);
    values.cpu.push(s ? s.cpuPct : null);
    const elu = row?.server?.eventLoopUtilization;
    values.elu.push(elu === undefined ? null : round(elu * 100, 1));
    values.genCpu.push(c?.cpuPct ?? null);
    values.machineCpu.push(g?.machinePct ?? null);
    values.lagMs.push(c?.lagMs ?? null);
    values.dropped.push(c ? c.dropped : null);
    values.vus.push(c?.vus ?? null);
  }
  const plateauStep = analysis.verdict.plateau?.step ?? null;
  const published = sources.resources?.resources ?? [];
  const firstLimitName = analysis.verdict.firstLimit.name;
  return {
    label,
    runId: analysis.runId,
    t0,
    x: seconds.map((t) => t - t0),
    values,
    bands: windowed.map((r) => ({
      step: r.step,
      startS: round(r.window!.startS - t0, 3),
      endS: round(r.window!.endS - t0, 3),
      plateau: r.step === plateauStep,
      invalid: r.invalid !== null,
    })),
    // Absent, not empty, without resources: such a run's page carries exactly what it did.
    ...(published.length > 0
      ? { resources: published.map((r) => resourceLine(r, t0, from, to, r.name === firstLimitName)) }
      : {}),
  };
}

/**
 * A resource's seconds from `from` to `to` (epoch s, the run's axis) on that axis. Resource
 * seconds are whole epoch seconds of plateau's clock, the clock of the client's samples.
 */
export function resourceLine(
  resource: ResourceSeries,
  t0: number,
  from: number,
  to: number,
  firstLimit: boolean,
): ResourceLine {
  const seconds = resource.seconds.filter((s) => s.t >= from && s.t <= to);
  const values: ResourceLine['values'] = {};
  for (const field of RESOURCE_FIELDS) {
    if (resource.seconds.every((s) => s[field] === null)) continue;
    values[field] = seconds.map((s) => {
      const v = s[field];
      return v === null ? null : round(v, 3);
    });
  }
  return {
    id: resource.id,
    name: resource.name,
    kind: resource.kind,
    role: resource.role,
    family: resource.family,
    source: resource.source,
    onFull: resource.onFull,
    firstLimit,
    x: seconds.map((s) => s.t - t0),
    values,
  };
}

/** What a resource's slots are called on its chart's axis. */
const UNITS: Record<ResourceRole, string> = {
  pool: 'connections',
  threads: 'threads',
  queue: 'tasks',
  cpu: 'cores',
  database: 'connections',
};

/** What a request that finds the resource full does, for the caption. */
const ON_FULL_WORDS: Record<OnFull, string> = {
  waits: 'A request that finds it full waits.',
  refused: 'A request that finds it full is refused.',
  queues: 'A request that finds it full queues.',
  unknown: '',
};

/**
 * One chart per published resource, across the runs of a page (A and B of a comparison
 * share a chart when they share the resource's id). The first limit the last run's verdict
 * named comes first and is marked; the rest keep resources.json's order. Slots: in use
 * against the capacity (dashed), callers waiting where the meters give them, and the mean
 * wait on the right-hand axis where they give it; a queue: its depth against its cap; CPU:
 * cores busy of the cores it may use.
 */
export function resourceCharts(runs: readonly RunSeries[]): ChartSpec[] {
  const lines = new Map<string, { line: ResourceLine; fields: Set<ResourceField>; first: boolean }>();
  // The last run (the page's own) first, so its names and its first limit lead.
  for (const run of [...runs].reverse()) {
    for (const line of run.resources ?? []) {
      const seen = lines.get(line.id);
      const entry = seen ?? { line, fields: new Set<ResourceField>(), first: false };
      for (const field of RESOURCE_FIELDS) if (line.values[field]) entry.fields.add(field);
      if (line.firstLimit && run === runs.at(-1)) entry.first = true;
      if (!seen) lines.set(line.id, entry);
    }
  }
  const ordered = [...lines.values()].sort((a, b) => Number(b.first) - Number(a.first));
  return ordered.map(({ line, fields, first }, index) => {
    const unit = line.kind === 'cpu' ? 'cores' : UNITS[line.role];
    const series: ChartSeriesSpec[] =
      line.kind === 'cpu'
        ? [
            { key: 'inUse', resource: line.id, label: 'cores busy', color: 'blue' },
            { key: 'capacity', resource: line.id, label: 'cores', color: 'red', limit: true },
          ]
        : line.kind === 'queue'
          ? [
              { key: 'inUse', resource: line.id, label: 'depth', color: 'blue' },
              { key: 'capacity', resource: line.id, label: 'cap', color: 'red', limit: true },
            ]
          : [
              { key: 'inUse', resource: line.id, label: 'in use', color: 'blue' },
              { key: 'capacity', resource: line.id, label: 'capacity', color: 'red', limit: true },
            ];
    if (fields.has('waiting'))
      series.push({ key: 'waiting', resource: line.id, label: 'waiting', color: 'orange' });
    if (fields.has('waitMs'))
      series.push({ key: 'waitMs', resource: line.id, label: 'wait ms', color: 'purple', scale: 'y2' });
    return {
      id: `resource-${index}`,
      title: line.name,
      caption: resourceCaption(line, fields, unit),
      yLabel: fields.has('waiting') && line.kind !== 'cpu' ? `${unit}, callers` : unit,
      ...(fields.has('waitMs') ? { y2Label: 'ms', y2Headroom: 1.5 } : {}),
      series,
      ...(first ? { firstLimit: true } : {}),
    };
  });
}

function resourceCaption(line: ResourceLine, fields: Set<ResourceField>, unit: string): string {
  const what =
    line.kind === 'cpu'
      ? 'Cores busy per second (CPU seconds per second) against the cores it may use (dashed).'
      : line.kind === 'queue'
        ? 'Tasks queued, mean of the readings in each second, against its cap (dashed; none drawn when unbounded).'
        : `${unit[0]!.toUpperCase()}${unit.slice(1)} in use, mean of the readings in each second, against its capacity (dashed).`;
  const waiting = fields.has('waiting') ? ' Waiting: callers queued for it.' : '';
  const wait = fields.has('waitMs') ? ' Wait ms (right-hand axis): mean time a caller waited for it.' : '';
  const full = ON_FULL_WORDS[line.onFull] ?? '';
  return `${what}${waiting}${wait}${full ? ` ${full}` : ''} Read from ${line.source} (${line.family} meters).`;
}

/** plateau's own GET /steps charts, which show nothing for a service that does not answer it. */
const STEPS_CHARTS = new Set(['pool', 'waiting', 'cpu']);

/**
 * The page's charts: REPORT_CHARTS, then one per published resource. Where no run has
 * plateau's own GET /steps figures but the published resources stand in for them (a
 * service plateau did not write), the three charts of GET /steps are left out rather than
 * drawn empty, as the terminal table leaves out their columns. A run without published
 * resources gets REPORT_CHARTS as they are.
 */
export function pageCharts(runs: readonly RunSeries[]): { charts: ChartSpec[]; resources: ChartSpec[] } {
  const resources = resourceCharts(runs);
  if (resources.length === 0) return { charts: REPORT_CHARTS, resources };
  const stepsFigures = runs.some((run) =>
    (['checkedOut', 'waitingMean', 'cpu'] as const).some((key) => run.values[key].some((v) => v !== null)),
  );
  return {
    charts: stepsFigures ? REPORT_CHARTS : REPORT_CHARTS.filter((c) => !STEPS_CHARTS.has(c.id)),
    resources,
  };
}
