// Turns the X-Load-Step header into a bounded set of bucket keys.

/** Bucket keys that do not come from a client's step tag. */
export const SPECIAL_STEPS = {
  /** The request carried no X-Load-Step header. */
  untagged: 'untagged',
  /** The header held something other than 1–32 of `[A-Za-z0-9_.-]`. */
  invalid: 'invalid',
  /** All later new tags once the bucket limit is reached. */
  overflow: 'overflow',
} as const;

/** Longest accepted step key. */
export const MAX_STEP_KEY_LENGTH = 32;

/** Distinct step buckets kept before new tags land in `overflow`. */
export const MAX_STEP_BUCKETS = 256;

const STEP_KEY = /^[A-Za-z0-9_.-]{1,32}$/;

/**
 * The bucket key for an X-Load-Step header value. Node joins repeated headers with `, `,
 * which makes them `invalid`, as is any value outside `[A-Za-z0-9_.-]{1,32}`.
 */
export function stepKeyFromHeader(value: string | string[] | undefined): string {
  if (value === undefined) return SPECIAL_STEPS.untagged;
  if (Array.isArray(value)) return SPECIAL_STEPS.invalid;
  return STEP_KEY.test(value) ? value : SPECIAL_STEPS.invalid;
}

/** Whether a key is one of the special buckets rather than a client's step. */
export function isSpecialStep(key: string): boolean {
  return key === SPECIAL_STEPS.untagged || key === SPECIAL_STEPS.invalid || key === SPECIAL_STEPS.overflow;
}
