// Metrics, sub-metrics and samples.

import { emptyObjectArray } from '../../lib/object-array.ts';
import { type MetricType, newSink, type ValueKind } from './sinks.ts';
import type { Threshold } from './thresholds.ts';

/** Tag name → value. Shared between the samples of one event; never mutated after use. */
export type Tags = Readonly<Record<string, string>>;

/**
 * The samples of one event: one or more metrics measured at the same time with the same
 * tags (k6's SampleContainer / ConnectedSamples). A request is one container of nine
 * `http_req*` values, an iteration one of four: at thousands of events per second, one
 * object per event instead of one per value keeps the garbage collector out of the way.
 * `timeMs` is epoch milliseconds; `metrics[i]` measured `values[i]`.
 */
export interface SampleContainer {
  readonly timeMs: number;
  readonly tags: Tags;
  readonly metrics: readonly Metric[];
  readonly values: readonly number[];
  /** k6 sample metadata (`vu`, `iter` when enabled): not tags, never indexed. */
  readonly metadata?: Readonly<Record<string, string>>;
}

/** A metric restricted to samples whose tags include every pair of `tags`. */
export class Submetric {
  readonly name: string;
  readonly suffix: string;
  readonly tags: readonly (readonly [string, string])[];
  readonly parent: Metric;
  readonly sink: ReturnType<typeof newSink>;
  readonly thresholds: Threshold[] = emptyObjectArray();

  constructor(parent: Metric, suffix: string, tags: readonly (readonly [string, string])[]) {
    this.parent = parent;
    this.suffix = suffix;
    this.tags = tags;
    this.name = `${parent.name}{${suffix}}`;
    this.sink = newSink(parent.type);
  }

  matches(tags: Tags): boolean {
    for (const [key, value] of this.tags) if (tags[key] !== value) return false;
    return true;
  }
}

/** A named metric, its aggregate and its thresholds. */
export class Metric {
  readonly name: string;
  readonly type: MetricType;
  readonly contains: ValueKind;
  readonly sink: ReturnType<typeof newSink>;
  /** Born as an array of objects, so every metric's has one hidden class (lib/object-array.ts). */
  readonly submetrics: Submetric[] = emptyObjectArray();
  readonly thresholds: Threshold[] = emptyObjectArray();
  /** Set once the first sample arrives (the JSON output writes the Metric line then). */
  observed = false;

  constructor(name: string, type: MetricType, contains: ValueKind) {
    this.name = name;
    this.type = type;
    this.contains = contains;
    this.sink = newSink(type);
  }

  /** Adds a sample's value to this metric and every sub-metric it matches. */
  ingest(value: number, tags: Tags): void {
    this.sink.add(value);
    for (const sub of this.submetrics) if (sub.matches(tags)) sub.sink.add(value);
  }
}
