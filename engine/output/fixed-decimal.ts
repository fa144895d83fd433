// Writes a number with six decimals (Go's %f, JavaScript's toFixed(6)) as ASCII bytes
// straight into a Buffer: a CSV row per metric sample is written tens of thousands of times
// a second, and toFixed() is a call into the runtime that also leaves a string behind.

const DIGIT_0 = 0x30;
const DOT = 0x2e;
const MINUS = 0x2d;
/** Above this, a value times 10^6 is an integer a double holds exactly (2^53). */
const MAX_EXACT_INTEGER = 2 ** 53;
/**
 * Below this, value × 10^6 as a double is within ~1.1e-5 of the exact product (one rounding,
 * relative error 2^-53), so rounding it to the nearest integer gives toFixed's digits unless
 * the exact product is within that of a half.
 */
const MAX_SCALED = 1e11;
/** How far from a half the scaled fraction must be for the fast rounding to be safe. */
const TIE_MARGIN = 1e-4;

/**
 * Writes `value` as toFixed(6) writes it into `buffer` at `offset` and returns the offset
 * after it. The caller leaves room for 24 bytes, or for `value.toFixed(6).length` when the
 * value is beyond 10^15 or not finite (written by toFixed itself, as are values whose
 * rounding the fast path cannot decide).
 */
export function writeFixed6(buffer: Uint8Array, offset: number, value: number): number {
  const magnitude = value < 0 ? -value : value;
  let scaled: number;
  if (Number.isInteger(magnitude) && magnitude < MAX_EXACT_INTEGER / 1e6) {
    scaled = magnitude * 1e6;
  } else {
    const product = magnitude * 1e6;
    if (!(product < MAX_SCALED)) return writeAscii(buffer, offset, value.toFixed(6));
    const floor = Math.floor(product);
    const fraction = product - floor;
    if (fraction > 0.5 - TIE_MARGIN && fraction < 0.5 + TIE_MARGIN) {
      return writeAscii(buffer, offset, value.toFixed(6));
    }
    scaled = fraction < 0.5 ? floor : floor + 1;
  }
  // toFixed keeps the sign of a negative value that rounds to zero ("-0.000000"), not of -0.
  if (value < 0) buffer[offset++] = MINUS;
  const whole = Math.floor(scaled / 1e6);
  // Digits in 32-bit integer arithmetic: on doubles, every % 10 is a call to fmod.
  let fraction = (scaled - whole * 1e6) | 0;
  offset = whole <= MAX_INT32 ? writeInt32(buffer, offset, whole | 0) : writeInteger(buffer, offset, whole);
  buffer[offset] = DOT;
  for (let i = 6; i >= 1; i--) {
    const tenth = (fraction / 10) | 0;
    buffer[offset + i] = DIGIT_0 + fraction - tenth * 10;
    fraction = tenth;
  }
  return offset + 7;
}

const MAX_INT32 = 2 ** 31 - 1;

/** Writes a non-negative 32-bit integer in decimal; returns the offset after it. */
function writeInt32(buffer: Uint8Array, offset: number, integer: number): number {
  let digits = 1;
  for (let rest = integer; rest >= 10; rest = (rest / 10) | 0) digits++;
  let rest = integer;
  for (let i = digits - 1; i >= 0; i--) {
    const tenth = (rest / 10) | 0;
    buffer[offset + i] = DIGIT_0 + rest - tenth * 10;
    rest = tenth;
  }
  return offset + digits;
}

/** Writes a non-negative integer below 2^53 in decimal; returns the offset after it. */
function writeInteger(buffer: Uint8Array, offset: number, integer: number): number {
  let digits = 1;
  for (let rest = integer; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  let rest = integer;
  for (let i = digits - 1; i >= 0; i--) {
    buffer[offset + i] = DIGIT_0 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return offset + digits;
}

/** Writes a string of ASCII characters; returns the offset after it. */
export function writeAscii(buffer: Uint8Array, offset: number, text: string): number {
  for (let i = 0; i < text.length; i++) buffer[offset + i] = text.charCodeAt(i);
  return offset + text.length;
}
