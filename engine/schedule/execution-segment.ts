// Execution segments: how k6 splits one test across instances, striping iterations.
//
// Reproduces k6's lib/execution_segment.go (see shared/k6-scheduling.md §1.1): the
// segment sequence is turned into per-segment "striped offsets" over a block of `lcd`
// elements, so the union over all instances is exactly the unsplit run.
import { PlateauError } from '../../contract/index.ts';
import {
  compare,
  equals,
  formatRational,
  lcm,
  ONE,
  parseRational,
  type Rational,
  rational,
  sub,
  ZERO,
} from './rational.ts';

/** A slice [from, to) of the whole test, 0 ≤ from < to ≤ 1. */
export interface Segment {
  readonly from: Rational;
  readonly to: Rational;
}

/** Where a segment's elements fall in each block of `lcd` elements. */
export interface StripedOffsets {
  /** Index of the segment's first element in a block. */
  start: number;
  /** Distances to each next element, cycling; their sum is `lcd`. */
  gaps: number[];
  lcd: number;
}

function invalid(setting: string, message: string, hint: string): PlateauError {
  return PlateauError.invalidConfig([{ setting, message, hint }], 'execution segment');
}

/** Parses `0:1/4`, `25%:50%`, `0.5:0.75`, or a single value `x` meaning `0:x`. */
export function parseSegment(text: string): Segment {
  const parts = text.split(':');
  const bounds = parts.length === 1 ? [ZERO, parseRational(parts[0]!)] : parts.map(parseRational);
  const [from, to] = bounds;
  if (parts.length > 2 || !from || !to || compare(from, to) >= 0 || compare(to, ONE) > 0) {
    throw invalid(
      '--execution-segment',
      `"${text}" is not a segment`,
      'use from:to with 0 <= from < to <= 1, e.g. 0:1/4, 25%:50% or 0.5:0.75',
    );
  }
  return { from, to };
}

/** Parses `0,1/4,1/2,3/4,1`: strictly increasing, from 0 to 1. */
export function parseSequence(text: string): Rational[] {
  const points = text.split(',').map(parseRational);
  const ok =
    points.length >= 2 &&
    points.every((p): p is Rational => p !== undefined) &&
    equals(points[0]!, ZERO) &&
    equals(points.at(-1)!, ONE) &&
    points.every((p, i) => i === 0 || compare(points[i - 1]!, p) < 0);
  if (!ok) {
    throw invalid(
      '--execution-segment-sequence',
      `"${text}" is not a segment sequence`,
      'use strictly increasing values from 0 to 1, e.g. 0,1/4,1/2,3/4,1',
    );
  }
  return points as Rational[];
}

/** A segment within its full sequence, with k6's striping precomputed. */
export class ExecutionTuple {
  readonly segments: readonly Segment[];
  readonly index: number;
  readonly lcd: number;
  readonly #offsets: number[][];

  private constructor(segments: readonly Segment[], index: number) {
    this.segments = segments;
    this.index = index;
    const lengths = segments.map((s) => sub(s.to, s.from));
    this.lcd = lengths.reduce((acc, l) => lcm(acc, l.den), 1);
    this.#offsets = stripe(lengths, this.lcd);
  }

  /**
   * The tuple for `segment` (default the whole test) within `sequence` (default: the
   * segment padded with the parts before and after it).
   */
  static create(segment?: Segment, sequence?: Rational[]): ExecutionTuple {
    const seg = segment ?? { from: ZERO, to: ONE };
    let segments: Segment[];
    if (sequence) {
      segments = sequence.slice(1).map((to, i) => ({ from: sequence[i]!, to }));
    } else {
      segments = [];
      if (compare(seg.from, ZERO) > 0) segments.push({ from: ZERO, to: seg.from });
      segments.push(seg);
      if (compare(seg.to, ONE) < 0) segments.push({ from: seg.to, to: ONE });
    }
    const index = segments.findIndex((s) => equals(s.from, seg.from) && equals(s.to, seg.to));
    if (index < 0) {
      throw invalid(
        '--execution-segment',
        `${formatSegment(seg)} is not one of the segments of the sequence`,
        'pick a segment between two consecutive values of --execution-segment-sequence',
      );
    }
    return new ExecutionTuple(segments, index);
  }

  /** Whether the test is split at all. */
  get isSplit(): boolean {
    return this.segments.length > 1;
  }

  /** The striped offsets of segment `i` (default: this tuple's segment). */
  stripedOffsets(i = this.index): StripedOffsets {
    const offsets = this.#offsets[i]!;
    return { start: offsets[0]!, gaps: offsets.slice(1), lcd: this.lcd };
  }

  /** k6's ScaleInt64: this instance's share of an integer (VUs, iterations), exact in sum. */
  scale(value: number): number {
    return this.isSplit ? this.scaleSegment(this.index, value) : value;
  }

  /** ScaleInt64 for segment `i`: whole blocks times elements per block, plus the remainder. */
  scaleSegment(i: number, value: number): number {
    const { start, gaps, lcd } = this.stripedOffsets(i);
    const remainder = value % lcd;
    let inRemainder = 0;
    let element = start;
    for (let k = 0; k < gaps.length && element < remainder; k++) {
      inRemainder++;
      element += gaps[k]!;
    }
    return Math.floor(value / lcd) * gaps.length + inRemainder;
  }

  /**
   * k6's GetNewExecutionTupleFromValue: the arrival-rate executors re-segment the test by
   * their maxVUs, so that each instance's share of iterations follows its share of VUs.
   */
  resegmentByValue(value: number): ExecutionTuple {
    if (value < 1) {
      throw invalid(
        'maxVUs',
        `${value} cannot be split across execution segments`,
        'use maxVUs of at least 1',
      );
    }
    if (value % this.lcd === 0) return this;
    const segments: Segment[] = [];
    let newIndex = -1;
    let previous = 0;
    for (let j = 0; j < this.segments.length; j++) {
      const share = this.scaleSegment(j, value);
      if (share === 0) {
        if (j === this.index) {
          throw invalid(
            '--execution-segment',
            `segment ${formatSegment(this.segments[j]!)} gets none of ${value} VUs`,
            'this instance has no work at this maxVUs; raise maxVUs or use fewer segments',
          );
        }
        continue;
      }
      if (j === this.index) newIndex = segments.length;
      segments.push({ from: rational(previous, value), to: rational(previous + share, value) });
      previous += share;
    }
    return new ExecutionTuple(segments, newIndex);
  }

  /** Whether this instance gets any of `value` (k6's HasWork: scaled maxVUs > 0). */
  hasWork(value: number): boolean {
    return this.scale(value) > 0;
  }
}

export function formatSegment(s: Segment): string {
  return `${formatRational(s.from)}:${formatRational(s.to)}`;
}

/**
 * k6's striping: walk the `lcd` elements of a block and give each to the first segment
 * (in order of size, largest first, ties in sequence order) that is owed one. Returns per
 * segment [start, gap, gap, …, wrap-around gap].
 */
function stripe(lengths: Rational[], lcd: number): number[][] {
  const norm = lengths.map((l) => l.num * (lcd / l.den));
  const order = norm.map((_, i) => i).sort((a, b) => norm[b]! - norm[a]! || a - b);
  const chosen = order.map(() => 0);
  const previous = lengths.map(() => 0);
  const offsets: number[][] = lengths.map(() => []);
  for (let e = 0; e < lcd; e++) {
    for (let k = 0; k < order.length; k++) {
      const i = order[k]!;
      const num = chosen[k]! * lcd;
      const den = norm[i]!;
      const quotient = Math.floor(num / den);
      if (e > quotient || (e === quotient && num % den === 0)) {
        chosen[k]!++;
        offsets[i]!.push(e - previous[i]!);
        previous[i] = e;
        if (offsets[i]!.length === den) offsets[i]!.push(offsets[i]![0]! + lcd - e);
        break;
      }
    }
  }
  return offsets;
}
