// The small study with hand-checkable answers that several end-to-end tests run.

/**
 * A 2-connection pool, 20 ms queries, and three 3 s steps past its ~80/s ceiling
 * (2 ÷ ~0.025 s held per request). Add `--recovery`, `--recovery-rate` and the rest.
 */
export const SMALL_STUDY = [
  '--set',
  'POOL_MAX=2',
  '--set',
  'QUERY_MS=20',
  '--steps',
  '40,120,160',
  '--hold',
  '3',
  '--ramp',
  '1',
] as const;
