// How the client summary writes the pass's maps and numbers as JSON, and reads them back checked.

/** A client summary whose contents are not what this plateau writes (edited, damaged). */
export class SummaryShapeError extends Error {}

/** Throws SummaryShapeError saying `what` is wrong, unless `ok`. */
export function expect(ok: boolean, what: string): asserts ok {
  if (!ok) throw new SummaryShapeError(what);
}

/** A finite number read back, or SummaryShapeError naming `what`. */
export function finite(value: unknown, what: string): number {
  expect(typeof value === 'number' && Number.isFinite(value), `${what} is not a number`);
  return value as number;
}

/** ±Infinity as JSON cannot hold it: null. */
export function unbounded(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

/** A number `unbounded` wrote, null read as `infinity` (the side it stood for). */
export function bounded(value: unknown, infinity: number, what: string): number {
  return value === null ? infinity : finite(value, what);
}

/**
 * A map keyed by whole numbers (seconds, bins) whose values are `width` numbers each, as one
 * flat array: each key as its step from the previous key (the first from 0), then its values.
 * Insertion order is kept: sums over these maps are taken in that order.
 */
export function packRecords<T>(map: ReadonlyMap<number, T>, values: (record: T) => number[]): number[] {
  const out: number[] = [];
  let previous = 0;
  for (const [key, record] of map) {
    out.push(key - previous, ...values(record));
    previous = key;
  }
  return out;
}

/** The map `packRecords` wrote, each record made from its `width` numbers by `make`. */
export function unpackRecords<T>(
  packed: unknown,
  width: number,
  make: (values: number[]) => T,
  what: string,
): Map<number, T> {
  expect(Array.isArray(packed) && packed.length % (width + 1) === 0, `${what} is not a packed map`);
  const map = new Map<number, T>();
  const numbers = packed as unknown[];
  let key = 0;
  for (let i = 0; i < numbers.length; i += width + 1) {
    key += finite(numbers[i], what);
    const values: number[] = [];
    for (let j = 1; j <= width; j++) values.push(finite(numbers[i + j], what));
    map.set(key, make(values));
  }
  return map;
}

/** A map of one number per key, packed as {@link packRecords}. */
export function packNumbers(map: ReadonlyMap<number, number>): number[] {
  return packRecords(map, (value) => [value]);
}

/** The map {@link packNumbers} wrote. */
export function unpackNumbers(packed: unknown, what: string): Map<number, number> {
  return unpackRecords(packed, 1, ([value]) => value!, what);
}
