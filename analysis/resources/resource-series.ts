// From meter scrapes to resources, second by second: each family's meters, and the declared resources.
import type {
  DeclaredResource,
  MeterSample,
  MeterScrape,
  ResourceSecond,
  ResourceSeries,
} from '../../contract/index.ts';
import {
  DEFAULT_POSITION,
  DEFAULT_ROLE,
  type DeclaredField,
  declaredFieldReadings,
} from './declared-resources.ts';
import {
  type ExtraReading,
  familyMeterNames,
  type Labels,
  METER_FAMILIES,
  type MeterFamily,
  type MeterRef,
  type Reading,
  recognisingNames,
  SECOND_FIELDS,
  type SecondField,
} from './meter-families.ts';

/** Resources of one family one source may make before the rest are dropped (with a note). */
export const DEFAULT_SERIES_CAP = 50;

/** What the scrapes showed: the resources, the meters nobody reads (by source), and what to say. */
export interface ResourcesFromScrapes {
  resources: ResourceSeries[];
  /** Per source, the sample names no family or declared resource reads, sorted. */
  unrecognised: Map<string, string[]>;
  notes: string[];
}

/**
 * Recognises the resources in a run's meter scrapes and reads their figures per epoch second
 * (the second of plateau's clock a scrape was taken in):
 * - gauges: the mean of the second's readings;
 * - counters: the increase since the source's previous reading ÷ the seconds between them; a
 *   counter that went down restarted (its new value is the increase), noted once per resource;
 * - summary means (Δsum ÷ Δcount): only when the count grew;
 * - a second without a reading is absent, never carried forward.
 * Every family's labels (and an `instance` label, and the source) make separate resources, at
 * most `seriesCap` per family and source; past the cap the rest are dropped with a note.
 * A declared resource sums the series its selectors match in each source. Scrapes of one
 * source are expected in time order (a counter reading older than the previous is skipped).
 */
export function resourcesFromScrapes(
  scrapes: Iterable<MeterScrape>,
  declared: readonly DeclaredResource[],
  options: { seriesCap?: number } = {},
): ResourcesFromScrapes {
  const cap = options.seriesCap ?? DEFAULT_SERIES_CAP;
  const read = meterNamesRead(declared);
  const plans = declared.map(declaredPlan);
  const sources = new Map<string, SourceResources>();
  for (const scrape of scrapes) {
    let source = sources.get(scrape.source);
    if (!source) {
      source = new SourceResources(scrape.source);
      sources.set(scrape.source, source);
    }
    source.add(scrape, read, plans, cap);
  }

  const notes: string[] = [];
  const trackers = [...sources.values()].flatMap((s) => [...s.trackers.values()]);
  for (const source of sources.values())
    for (const [family, dropped] of source.overCap)
      notes.push(
        `${source.source}: ${cap + dropped.size} ${family} resources (one per label set), more than the cap of ${cap}; ` +
          `the first ${cap} seen are followed, the other ${dropped.size} dropped`,
      );
  const caveats = new Set<MeterFamily>();
  for (const tracker of trackers) if (tracker.family?.caveat) caveats.add(tracker.family);
  for (const family of caveats) notes.push(`${family.family}: ${family.caveat}`);

  const resources = trackers.map((t) => t.series());
  disambiguateNames(resources, trackers);
  for (const [i, tracker] of trackers.entries()) {
    const resetAtMs = tracker.firstResetAtMs();
    if (resetAtMs !== null)
      notes.push(
        `${resources[i]!.name}: a counter went down at ${new Date(resetAtMs).toISOString()} (the service restarted?); ` +
          'counted from its new value',
      );
  }
  for (const plan of plans)
    for (const field of plan.fields)
      if (!plan.seen.has(field.field))
        notes.push(
          `declared resource "${plan.resource.name}": its series ${field.field} (${field.expr}) never appeared in any source`,
        );

  resources.sort(
    (a, b) => a.position - b.position || a.name.localeCompare(b.name) || a.id.localeCompare(b.id),
  );
  const unrecognised = new Map<string, string[]>();
  for (const source of sources.values()) unrecognised.set(source.source, [...source.unrecognised].sort());
  return { resources, unrecognised, notes };
}

/**
 * Every meter name a family or one of the declared resources reads: a source keeps only the
 * samples with these names (the rest it may list as unrecognised).
 */
export function meterNamesRead(declared: readonly DeclaredResource[]): ReadonlySet<string> {
  const names = new Set(FAMILY_METER_NAMES);
  for (const resource of declared)
    for (const field of declaredFieldReadings(resource)) names.add(field.selector.name);
  return names;
}

/** The names among `names` that nothing reads, sorted and without repeats. */
export function unrecognisedNames(names: Iterable<string>, read: ReadonlySet<string>): string[] {
  const out = new Set<string>();
  for (const name of names) if (!read.has(name)) out.add(name);
  return [...out].sort();
}

const FAMILY_METER_NAMES: ReadonlySet<string> = new Set(
  METER_FAMILIES.flatMap((f) => [...familyMeterNames(f)]),
);

/** Families by each meter name that makes one of their resources. */
const RECOGNISERS: ReadonlyMap<string, readonly MeterFamily[]> = (() => {
  const map = new Map<string, MeterFamily[]>();
  for (const family of METER_FAMILIES)
    for (const name of recognisingNames(family)) {
      const list = map.get(name) ?? [];
      list.push(family);
      map.set(name, list);
    }
  return map;
})();

/** Which field of a second each declared field fills. */
const DECLARED_TO_SECOND: Record<DeclaredField, SecondField> = {
  inUse: 'inUse',
  max: 'capacity',
  waiting: 'waiting',
  depth: 'inUse',
  cap: 'capacity',
};

interface DeclaredPlan {
  resource: DeclaredResource;
  fields: ReturnType<typeof declaredFieldReadings>;
  /** Fields whose series appeared in some source. */
  seen: Set<DeclaredField>;
  readings: Partial<Record<SecondField, Reading>>;
}

function declaredPlan(resource: DeclaredResource): DeclaredPlan {
  const fields = declaredFieldReadings(resource);
  const readings: Partial<Record<SecondField, Reading>> = {};
  for (const field of fields) {
    const meter: MeterRef = { name: field.selector.name, match: field.selector.matchers };
    readings[DECLARED_TO_SECOND[field.field]] = field.counter
      ? { read: 'rate', meter }
      : { read: 'gauge', meters: [meter], combine: 'sum' };
  }
  return { resource, fields, seen: new Set(), readings };
}

/** The resources one source showed, and the meter names it had that nothing reads. */
class SourceResources {
  readonly trackers = new Map<string, Tracker>();
  readonly unrecognised = new Set<string>();
  /** Per family, the ids past the cap. */
  readonly overCap = new Map<string, Set<string>>();
  readonly #perFamily = new Map<string, number>();
  readonly #declared = new Map<DeclaredPlan, Tracker>();
  /** Label sets already recognised (followed or past the cap), by family. */
  readonly #seen = new Set<string>();

  constructor(readonly source: string) {}

  add(scrape: MeterScrape, read: ReadonlySet<string>, plans: readonly DeclaredPlan[], cap: number): void {
    const index = new Map<string, MeterSample[]>();
    for (const sample of scrape.samples) {
      // The readers drop NaN and ±Inf; one that slipped through is no reading either.
      if (!Number.isFinite(sample.value)) continue;
      if (!read.has(sample.name)) {
        this.unrecognised.add(sample.name);
        continue;
      }
      const list = index.get(sample.name);
      if (list) list.push(sample);
      else index.set(sample.name, [sample]);
    }
    const scrapeIndex = new ScrapeIndex(index);
    for (const [name, samples] of index) {
      const families = RECOGNISERS.get(name);
      if (!families) continue;
      for (const family of families)
        for (const sample of samples) this.#recognise(family, sample.labels, cap);
    }
    for (const plan of plans) {
      let seenHere = false;
      for (const field of plan.fields) {
        const reading = plan.readings[DECLARED_TO_SECOND[field.field]]!;
        const meter =
          reading.read === 'rate' ? reading.meter : reading.read === 'gauge' ? reading.meters[0]! : null;
        if (meter && meterValue(meter, scrapeIndex, {}) !== undefined) {
          plan.seen.add(field.field);
          seenHere = true;
        }
      }
      if (seenHere && !this.#declared.has(plan)) {
        const tracker = declaredTracker(plan, this.source);
        this.#declared.set(plan, tracker);
        this.trackers.set(tracker.id, tracker);
      }
    }
    for (const tracker of this.trackers.values()) tracker.add(scrape.atMs, scrapeIndex);
  }

  #recognise(family: MeterFamily, sampleLabels: Labels, cap: number): void {
    // Every scrape shows the same label sets again: a cheap key settles the ones already seen.
    let key = family.family;
    for (const label of family.identity) key += `\u0000${sampleLabels[label] ?? ''}`;
    if (sampleLabels.instance !== undefined) key += `\u0001${sampleLabels.instance}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    const identity: Record<string, string> = {};
    for (const label of family.identity) identity[label] = sampleLabels[label] ?? '';
    if (sampleLabels.instance !== undefined) identity.instance = sampleLabels.instance;
    const id = resourceId(family.family, identity, this.source);
    if (this.trackers.has(id)) return;
    const count = this.#perFamily.get(family.family) ?? 0;
    if (count >= cap) {
      const dropped = this.overCap.get(family.family) ?? new Set();
      dropped.add(id);
      this.overCap.set(family.family, dropped);
      return;
    }
    this.#perFamily.set(family.family, count + 1);
    this.trackers.set(id, familyTracker(family, identity, this.source, id));
  }
}

/** `hikaricp{pool="orders",instance="a:8080"}@metrics http://a:8080/actuator/prometheus` */
function resourceId(family: string, identity: Labels, source: string): string {
  const labels = Object.entries(identity).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `${family}{${labels.join(',')}}@${source}`;
}

function familyTracker(family: MeterFamily, identity: Labels, source: string, id: string): Tracker {
  const readings: Partial<Record<SecondField, Reading>> = {};
  for (const field of SECOND_FIELDS) if (family[field]) readings[field] = family[field];
  return new Tracker(
    {
      id,
      name: family.name(identity),
      kind: family.kind,
      role: family.role,
      family: family.family,
      source,
      onFull: family.onFull,
      position: family.position,
    },
    identity,
    readings,
    family.extra ?? [],
    family,
  );
}

function declaredTracker(plan: DeclaredPlan, source: string): Tracker {
  const r = plan.resource;
  return new Tracker(
    {
      id: `declared{name=${JSON.stringify(r.name)}}@${source}`,
      name: r.name,
      kind: r.kind,
      role: r.role ?? DEFAULT_ROLE[r.kind],
      family: 'declared',
      source,
      onFull: r.onFull ?? 'unknown',
      position: r.position ?? DEFAULT_POSITION,
    },
    {},
    plan.readings,
    [],
    null,
  );
}

/** When two resources read the same, each gets its instance (or its source's host, or its source) after its name. */
function disambiguateNames(resources: ResourceSeries[], trackers: readonly Tracker[]): void {
  const rename = (suffix: (i: number) => string) => {
    const byName = new Map<string, number[]>();
    resources.forEach((r, i) => {
      byName.set(r.name, [...(byName.get(r.name) ?? []), i]);
    });
    for (const indices of byName.values())
      if (indices.length > 1) for (const i of indices) resources[i]!.name += ` [${suffix(i)}]`;
  };
  rename((i) => trackers[i]!.identity.instance ?? hostOf(resources[i]!.source));
  rename((i) => resources[i]!.source);
}

/** `metrics http://10.0.0.7:8080/actuator/prometheus` → `10.0.0.7:8080`; a label without a URL as it is. */
function hostOf(source: string): string {
  return /\b[a-z][a-z0-9+.-]*:\/\/([^/\s?#]+)/i.exec(source)?.[1] ?? source;
}

/** One resource being read: a figure per field of its seconds, and its breakdowns. */
class Tracker {
  readonly #figures = new Map<SecondField, Figure>();
  readonly #extras: { key: string; figure: Figure }[] = [];
  readonly #eachValue: EachValueFigure[] = [];

  constructor(
    readonly meta: Omit<ResourceSeries, 'seconds'>,
    readonly identity: Labels,
    readings: Partial<Record<SecondField, Reading>>,
    extras: readonly ExtraReading[],
    readonly family: MeterFamily | null,
  ) {
    for (const field of SECOND_FIELDS) {
      const reading = readings[field];
      if (reading) this.#figures.set(field, figureOf(reading, identity));
    }
    for (const extra of extras) {
      if ('read' in extra) this.#extras.push({ key: extra.key, figure: figureOf(extra.read, identity) });
      else this.#eachValue.push(new EachValueFigure(extra, identity));
    }
  }

  get id(): string {
    return this.meta.id;
  }

  add(atMs: number, index: ScrapeIndex): void {
    for (const figure of this.#figures.values()) figure.add(atMs, index);
    for (const { figure } of this.#extras) figure.add(atMs, index);
    for (const each of this.#eachValue) each.add(atMs, index);
  }

  /** The earliest reading at which one of its counters went down; null when none did. */
  firstResetAtMs(): number | null {
    let first: number | null = null;
    for (const figure of [...this.#figures.values(), ...this.#extras.map((e) => e.figure)]) {
      const at = figure.resetAtMs();
      if (at !== null && (first === null || at < first)) first = at;
    }
    return first;
  }

  series(): ResourceSeries {
    const ts = new Set<number>();
    for (const figure of this.#figures.values()) for (const t of figure.seconds()) ts.add(t);
    for (const { figure } of this.#extras) for (const t of figure.seconds()) ts.add(t);
    for (const each of this.#eachValue) for (const t of each.seconds()) ts.add(t);
    const seconds: ResourceSecond[] = [];
    for (const t of [...ts].sort((a, b) => a - b)) {
      const second: ResourceSecond = {
        t,
        inUse: null,
        capacity: null,
        waiting: null,
        waitMs: null,
        holdMs: null,
        refused: null,
        acquired: null,
      };
      let any = false;
      for (const [field, figure] of this.#figures) {
        const value = figure.at(t);
        if (value === undefined) continue;
        second[field] = round(value);
        any = true;
      }
      const extra: Record<string, number> = {};
      for (const { key, figure } of this.#extras) {
        const value = figure.at(t);
        if (value !== undefined) extra[key] = round(value);
      }
      for (const each of this.#eachValue) Object.assign(extra, each.at(t));
      if (Object.keys(extra).length > 0) {
        second.extra = extra;
        any = true;
      }
      if (any) seconds.push(second);
    }
    return { ...this.meta, seconds };
  }
}

/** One figure of a resource, fed each scrape, read per epoch second. */
interface Figure {
  add(atMs: number, index: ScrapeIndex): void;
  /** The figure of second `t`; undefined when the second has none. */
  at(t: number): number | undefined;
  seconds(): Iterable<number>;
  /** The first reading (epoch ms) at which a counter it reads went down; null when none did. */
  resetAtMs(): number | null;
}

function figureOf(reading: Reading, identity: Labels): Figure {
  switch (reading.read) {
    case 'gauge':
      return new GaugeFigure(reading, identity);
    case 'rate':
      return new RateFigure(reading.meter, identity);
    case 'ratio':
      return new RatioFigure(reading.numerator, reading.denominator, reading.scale, identity);
    case 'first':
      return new FirstFigure(reading.of.map((r) => figureOf(r, identity)));
  }
}

/** One scrape's samples by name, and by the values of the labels a meter lines up with a resource's identity. */
class ScrapeIndex {
  readonly #byName: ReadonlyMap<string, readonly MeterSample[]>;
  // Per meter name and list of labels, the samples by those labels' values: built once per
  // scrape, so a thousand resources of one family do not each scan a thousand series.
  readonly #grouped = new Map<string, Map<string, MeterSample[]>>();

  constructor(byName: ReadonlyMap<string, readonly MeterSample[]>) {
    this.#byName = byName;
  }

  /**
   * The samples of the meter that carry the resource's identity labels (renamed or skipped as
   * the meter says); undefined when the scrape has no series of that name.
   */
  carrying(meter: MeterRef, identity: Labels): readonly MeterSample[] | undefined {
    const samples = this.#byName.get(meter.name);
    if (!samples) return undefined;
    const labels: string[] = [];
    const values: string[] = [];
    for (const label in identity) {
      const as = meter.labels?.[label];
      if (as === null) continue;
      labels.push(as ?? label);
      values.push(identity[label]!);
    }
    if (labels.length === 0) return samples;
    const spec = `${meter.name}\u0000${labels.join('\u0000')}`;
    let groups = this.#grouped.get(spec);
    if (!groups) {
      groups = new Map();
      for (const sample of samples) {
        const key = labels.map((l) => sample.labels[l] ?? '').join('\u0000');
        const group = groups.get(key);
        if (group) group.push(sample);
        else groups.set(key, [sample]);
      }
      this.#grouped.set(spec, groups);
    }
    return groups.get(values.join('\u0000')) ?? [];
  }
}

/**
 * A meter's value for a resource at one scrape: the sum over the series that carry the
 * resource's identity labels and the meter's `match`, and pass its `where`, times its scale;
 * undefined when no series of the meter carries them.
 */
function meterValue(meter: MeterRef, index: ScrapeIndex, identity: Labels): number | undefined {
  const samples = index.carrying(meter, identity);
  if (!samples) return undefined;
  let found = false;
  let sum = 0;
  for (const sample of samples) {
    if (!matches(meter, sample)) continue;
    found = true;
    if (passesWhere(meter, sample)) sum += sample.value;
  }
  return found ? sum * (meter.scale ?? 1) : undefined;
}

function matches(meter: MeterRef, sample: MeterSample): boolean {
  if (meter.match)
    for (const label in meter.match) if ((sample.labels[label] ?? '') !== meter.match[label]) return false;
  return true;
}

function passesWhere(meter: MeterRef, sample: MeterSample): boolean {
  if (meter.where)
    for (const label in meter.where)
      if (!meter.where[label]!.includes(sample.labels[label] ?? '')) return false;
  return true;
}

const secondOf = (atMs: number): number => Math.floor(atMs / 1000);

/** Per second, the sum and count of a gauge's readings. */
class GaugeBuckets {
  readonly #buckets = new Map<number, { sum: number; n: number }>();

  push(t: number, value: number): void {
    const bucket = this.#buckets.get(t);
    if (bucket) {
      bucket.sum += value;
      bucket.n++;
    } else this.#buckets.set(t, { sum: value, n: 1 });
  }

  mean(t: number): number | undefined {
    const bucket = this.#buckets.get(t);
    return bucket ? bucket.sum / bucket.n : undefined;
  }

  seconds(): Iterable<number> {
    return this.#buckets.keys();
  }
}

class GaugeFigure implements Figure {
  readonly #buckets = new GaugeBuckets();

  constructor(
    readonly reading: Reading & { read: 'gauge' },
    readonly identity: Labels,
  ) {}

  add(atMs: number, index: ScrapeIndex): void {
    const product = this.reading.combine === 'product';
    let value = product ? 1 : 0;
    for (const meter of this.reading.meters) {
      const v = meterValue(meter, index, this.identity);
      if (v === undefined) return;
      value = product ? value * v : value + v;
    }
    // A value that means "no limit" is no figure: the capacity of that second reads null.
    if (this.reading.unbounded?.(value)) return;
    this.#buckets.push(secondOf(atMs), value);
  }

  at(t: number): number | undefined {
    return this.#buckets.mean(t);
  }

  seconds(): Iterable<number> {
    return this.#buckets.seconds();
  }

  resetAtMs(): null {
    return null;
  }
}

/** A counter's increase between readings; a decrease is a restart, counted from the new value. */
class CounterDelta {
  #prev: { atMs: number; value: number } | null = null;
  firstResetAtMs: number | null = null;

  /** The increase since the previous reading and the seconds between them; null for the first or an out-of-order reading. */
  next(atMs: number, value: number): { increase: number; seconds: number } | null {
    const prev = this.#prev;
    if (prev && atMs <= prev.atMs) return null;
    this.#prev = { atMs, value };
    if (!prev) return null;
    let increase = value - prev.value;
    if (increase < 0) {
      increase = value;
      this.firstResetAtMs ??= atMs;
    }
    return { increase, seconds: (atMs - prev.atMs) / 1000 };
  }
}

class RateFigure implements Figure {
  readonly #delta = new CounterDelta();
  readonly #buckets = new Map<number, { increase: number; seconds: number }>();

  constructor(
    readonly meter: MeterRef,
    readonly identity: Labels,
  ) {}

  add(atMs: number, index: ScrapeIndex): void {
    const value = meterValue(this.meter, index, this.identity);
    if (value === undefined) return;
    const delta = this.#delta.next(atMs, value);
    if (!delta) return;
    const t = secondOf(atMs);
    const bucket = this.#buckets.get(t);
    if (bucket) {
      bucket.increase += delta.increase;
      bucket.seconds += delta.seconds;
    } else this.#buckets.set(t, { ...delta });
  }

  /** Increase per second over the intervals that ended in second t. */
  at(t: number): number | undefined {
    const bucket = this.#buckets.get(t);
    return bucket ? bucket.increase / bucket.seconds : undefined;
  }

  seconds(): Iterable<number> {
    return this.#buckets.keys();
  }

  resetAtMs(): number | null {
    return this.#delta.firstResetAtMs;
  }
}

class RatioFigure implements Figure {
  readonly #numerator = new CounterDelta();
  readonly #denominator = new CounterDelta();
  readonly #buckets = new Map<number, { numerator: number; denominator: number }>();

  constructor(
    readonly numerator: MeterRef,
    readonly denominator: MeterRef,
    readonly scale: number,
    readonly identity: Labels,
  ) {}

  add(atMs: number, index: ScrapeIndex): void {
    const num = meterValue(this.numerator, index, this.identity);
    const den = meterValue(this.denominator, index, this.identity);
    if (num === undefined || den === undefined) return;
    const dNum = this.#numerator.next(atMs, num);
    const dDen = this.#denominator.next(atMs, den);
    if (!dNum || !dDen) return;
    const t = secondOf(atMs);
    const bucket = this.#buckets.get(t) ?? { numerator: 0, denominator: 0 };
    bucket.numerator += dNum.increase;
    bucket.denominator += dDen.increase;
    this.#buckets.set(t, bucket);
  }

  at(t: number): number | undefined {
    const bucket = this.#buckets.get(t);
    return bucket && bucket.denominator > 0
      ? (bucket.numerator / bucket.denominator) * this.scale
      : undefined;
  }

  *seconds(): Iterable<number> {
    for (const [t, bucket] of this.#buckets) if (bucket.denominator > 0) yield t;
  }

  resetAtMs(): number | null {
    const a = this.#numerator.firstResetAtMs;
    const b = this.#denominator.firstResetAtMs;
    return a === null ? b : b === null ? a : Math.min(a, b);
  }
}

class FirstFigure implements Figure {
  #chosen: Figure | null | undefined;

  constructor(readonly figures: readonly Figure[]) {}

  add(atMs: number, index: ScrapeIndex): void {
    for (const figure of this.figures) figure.add(atMs, index);
  }

  /** Chosen once all readings are in: the first way that gave any second. */
  #choice(): Figure | null {
    if (this.#chosen === undefined)
      this.#chosen = this.figures.find((f) => !f.seconds()[Symbol.iterator]().next().done) ?? null;
    return this.#chosen;
  }

  at(t: number): number | undefined {
    return this.#choice()?.at(t);
  }

  seconds(): Iterable<number> {
    return this.#choice()?.seconds() ?? [];
  }

  resetAtMs(): number | null {
    return this.#choice()?.resetAtMs() ?? null;
  }
}

/** One gauge per value of a label (PostgreSQL's waits by type), 0 for a value known before but absent now. */
class EachValueFigure {
  readonly #byKey = new Map<string, GaugeBuckets>();

  constructor(
    readonly extra: Extract<ExtraReading, { eachValueOf: string }>,
    readonly identity: Labels,
  ) {}

  add(atMs: number, index: ScrapeIndex): void {
    const meter = this.extra.meter;
    const samples = index.carrying(meter, this.identity);
    if (!samples) return;
    const sums = new Map<string, number>();
    let found = false;
    for (const sample of samples) {
      if (!matches(meter, sample)) continue;
      found = true;
      if (!passesWhere(meter, sample)) continue;
      const key = this.extra.key(sample.labels[this.extra.eachValueOf] ?? '');
      sums.set(key, (sums.get(key) ?? 0) + sample.value * (meter.scale ?? 1));
    }
    if (!found) return;
    const t = secondOf(atMs);
    for (const key of this.#byKey.keys()) if (!sums.has(key)) sums.set(key, 0);
    for (const [key, value] of sums) {
      let buckets = this.#byKey.get(key);
      if (!buckets) {
        buckets = new GaugeBuckets();
        this.#byKey.set(key, buckets);
      }
      buckets.push(t, value);
    }
  }

  at(t: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [key, buckets] of this.#byKey) {
      const mean = buckets.mean(t);
      if (mean !== undefined) out[key] = round(mean);
    }
    return out;
  }

  *seconds(): Iterable<number> {
    for (const buckets of this.#byKey.values()) yield* buckets.seconds();
  }
}

/** Three decimals: a figure per second needs no more, and resources.json stays small. */
function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
