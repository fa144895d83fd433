// The bounded store behind a Trend's percentiles: a log-linear histogram over the bits of
// IEEE-754 doubles, HdrHistogram's layout at 3 significant digits applied to any number.
import { endianness } from 'node:os';

/**
 * Buckets per power of two: a bucket is a double's sign, exponent e and the top 10 bits of
 * its mantissa, so between 2^e and 2^(e+1) every bucket is 2^(e−10) wide: at most 2⁻¹⁰ of
 * its lower edge. HdrHistogram with 3 significant digits has the same 1,024 per doubling.
 */
const SUB_BUCKET_BITS = 10;
const SUB_BUCKETS = 1 << SUB_BUCKET_BITS;
/** A page's slot after its buckets holds the page's total, so a walk skips whole pages. */
const TOTAL = SUB_BUCKETS;
/** Bytes of one page: its buckets and its total, each a float64 count (exact to 2⁵³). */
const PAGE_BYTES = (SUB_BUCKETS + 1) * 8;
/** One page per sign and exponent: the top 12 bits of a double. */
const PAGES = 1 << 12;
/** Pages of negative numbers have the sign bit, the top one of the 12. */
const NEGATIVE = PAGES >>> 1;
/** What the page table's slots cost at most, bytes: a pointer each. */
const TABLE_BYTES = PAGES * 8;

/**
 * Where the engine reads a double's bits: the high word (sign, exponent, top 20 mantissa
 * bits) is the second Uint32 on a little-endian machine. One module-wide pair of views, so
 * recording allocates nothing (the engine's JavaScript runs on one thread).
 */
const scratch = new Float64Array(1);
const words = new Uint32Array(scratch.buffer);
const HIGH = endianness() === 'LE' ? 1 : 0;
const LOW = 1 - HIGH;

/**
 * The slot of a page never opened. A real (empty) typed array rather than undefined, so
 * the table is born and stays an array of objects: V8 sees one kind of element in every
 * sink's table (lib/object-array.ts says why that matters).
 */
const NO_PAGE = new Float64Array(0);

/**
 * Position of page `key` in value order: negative pages from the largest magnitude (key
 * 4095) to the smallest (2048), then positive ones from 0 up.
 */
function ordinalOf(key: number): number {
  return key >= NEGATIVE ? PAGES - 1 - key : NEGATIVE + key;
}

function keyOf(ordinal: number): number {
  return ordinal < NEGATIVE ? PAGES - 1 - ordinal : ordinal - NEGATIVE;
}

/**
 * The lower edge in magnitude of bucket `sub` of page `key`: the double whose high word
 * is the bucket's bits and whose other bits are 0. A value with at most 11 significant
 * bits (every integer up to 2,048, and 0) is its own bucket's edge, so it reads back
 * exactly.
 */
function edgeOf(key: number, sub: number): number {
  words[HIGH] = ((key << 20) | (sub << (20 - SUB_BUCKET_BITS))) >>> 0;
  words[LOW] = 0;
  return scratch[0]!;
}

/**
 * One page of a histogram as data: its key (sign and exponent, the top 12 bits of its
 * values) and its 1,024 bucket counts followed by its total.
 */
export interface TrendPage {
  key: number;
  counts: Float64Array;
}

/**
 * Counts of values by bucket (see SUB_BUCKETS), in pages of 1,024 buckets opened on a
 * page's first value: memory grows with the range of magnitudes a trend sees, never with
 * how many values it records. Latencies from 0.01 ms to 100 s open about 24 pages (200
 * KB); every finite double there is (±, 0, subnormals, up to ±1.8e308) would fit in at
 * most 4,096 pages. A value read back is its bucket's lower edge in magnitude: at most
 * 2⁻¹⁰ (0.098 %) nearer zero than the value recorded, never farther.
 *
 * Two histograms merge by adding their counts bucket by bucket, which gives exactly the
 * histogram of all their values together.
 */
export class TrendHistogram {
  /** One slot per sign and exponent; NO_PAGE until a value falls there. */
  readonly #pages: Float64Array[] = new Array<Float64Array>(PAGES).fill(NO_PAGE);
  #openPages = 0;
  /** The lowest and highest page ordinals opened (ordinalOf), bounds of every walk. */
  #firstOrdinal = PAGES;
  #lastOrdinal = -1;

  /**
   * Counts one finite value (the engine's emitters give no others: k6/metrics refuses
   * NaN and ±Infinity). Allocates only when the value opens a page.
   */
  record(value: number): void {
    scratch[0] = value;
    const high = words[HIGH]!;
    const key = high >>> 20;
    let page = this.#pages[key]!;
    if (page === NO_PAGE) page = this.#open(key);
    page[(high >>> (20 - SUB_BUCKET_BITS)) & (SUB_BUCKETS - 1)]! += 1;
    page[TOTAL]! += 1;
  }

  /** Adds every count of `other` to this one (`other` is unchanged). */
  merge(other: TrendHistogram): void {
    for (let key = 0; key < PAGES; key++) {
      const theirs = other.#pages[key]!;
      if (theirs === NO_PAGE) continue;
      let ours = this.#pages[key]!;
      if (ours === NO_PAGE) ours = this.#open(key);
      for (let i = 0; i <= TOTAL; i++) ours[i]! += theirs[i]!;
    }
  }

  /**
   * Copies of the opened pages, for another process (engine workers send their trends to
   * the coordinator). With `sent` (page key → the page's total when it was last sent), only
   * pages whose total changed since, and `sent` is brought up to date: a page's counts only
   * grow, so the receiver replaces its copy of each page it gets. 8 KB a page.
   */
  pages(sent?: Map<number, number>): TrendPage[] {
    const pages: TrendPage[] = [];
    for (let key = 0; key < PAGES; key++) {
      const page = this.#pages[key]!;
      if (page === NO_PAGE) continue;
      const total = page[TOTAL]!;
      if (sent) {
        if (sent.get(key) === total) continue;
        sent.set(key, total);
      }
      pages.push({ key, counts: page.slice() });
    }
    return pages;
  }

  /**
   * Adds the counts of a page another histogram gave (`pages()`) to this one's page of the
   * same key. Throws a RangeError for a page that is not one (a key outside the table, or
   * counts of the wrong length).
   */
  addPage(page: TrendPage): void {
    const { key, counts } = page;
    if (!Number.isInteger(key) || key < 0 || key >= PAGES || counts.length !== TOTAL + 1) {
      throw new RangeError(`not a trend histogram page: key ${key}, ${counts.length} counts`);
    }
    let ours = this.#pages[key]!;
    if (ours === NO_PAGE) ours = this.#open(key);
    for (let i = 0; i <= TOTAL; i++) ours[i]! += counts[i]!;
  }

  /**
   * The value of 0-based `rank` in value order, as its bucket's lower edge in magnitude.
   * Walks the opened pages, skipping whole ones by their totals, then at most one page's
   * 1,024 buckets: microseconds, however many values were recorded. Throws a RangeError
   * for a rank outside the recorded values.
   */
  valueAtRank(rank: number): number {
    let seen = 0;
    for (let ordinal = this.#firstOrdinal; ordinal <= this.#lastOrdinal; ordinal++) {
      const key = keyOf(ordinal);
      const page = this.#pages[key]!;
      if (page === NO_PAGE) continue;
      if (seen + page[TOTAL]! <= rank) {
        seen += page[TOTAL]!;
        continue;
      }
      // Within a negative page, larger magnitudes (higher buckets) come first.
      const negative = key >= NEGATIVE;
      for (let i = 0; i < SUB_BUCKETS; i++) {
        const sub = negative ? SUB_BUCKETS - 1 - i : i;
        seen += page[sub]!;
        if (seen > rank) return edgeOf(key, sub);
      }
    }
    throw new RangeError(`rank ${rank} is outside the ${seen} values recorded`);
  }

  /** Bytes its counts hold: the pages opened, and the page table (counted at 8 bytes a slot). */
  get bytes(): number {
    return this.#openPages * PAGE_BYTES + TABLE_BYTES;
  }

  #open(key: number): Float64Array {
    const page = new Float64Array(SUB_BUCKETS + 1);
    this.#pages[key] = page;
    this.#openPages++;
    const ordinal = ordinalOf(key);
    if (ordinal < this.#firstOrdinal) this.#firstOrdinal = ordinal;
    if (ordinal > this.#lastOrdinal) this.#lastOrdinal = ordinal;
    return page;
  }
}
