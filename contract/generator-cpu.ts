// `generator.json`: the load generator's CPU per second, read by the harness from /proc.

/** One second of the generator's and the machine's CPU. */
export interface GeneratorSecond {
  /** Start of the second, epoch seconds. */
  t: number;
  /** CPU the generator process used, % of one core (a multi-threaded k6 can pass 100). */
  cpuPct: number;
  /**
   * The same, % of what the generator can use: one core for the embedded engine, every core
   * for k6. With engine workers, the busiest worker's CPU, % of its one core: the test runs
   * as fast as its slowest share, so the generator is at its limit when any worker is.
   */
  usablePct: number;
  /**
   * Each engine worker's CPU, % of one core, in the order they started (`--workers`; absent
   * without workers and in files written before workers). `cpuPct` is theirs and the
   * coordinator's together.
   */
  workers?: number[];
  /** The whole machine's busy CPU, % of all cores (the service and PostgreSQL share it). */
  machinePct: number | null;
  /** The generator's resident memory, MB (absent in files written before it was sampled). */
  rssMb?: number;
}

/**
 * The generator's CPU as the harness saw it. It exists because real k6 writes no
 * `engine_cpu_pct`: with it, a saturated k6 is marked the way a saturated engine is.
 */
export interface GeneratorCpuReport {
  kind: 'plateau.generator-cpu';
  schemaVersion: 1;
  engine: 'embedded' | 'k6';
  /** Cores the generator may use, the divisor of `usablePct` (with workers: one each). */
  usableCores: number;
  /** Engine workers the load ran on (`--workers`); absent when it ran in one process. */
  workers?: number;
  seconds: GeneratorSecond[];
}
