// Samples the load generator's CPU once a second from /proc while it runs (generator.json).
import type { GeneratorCpuReport, GeneratorSecond } from '../../contract/index.ts';
import { childPids, machineCpuTicks, processCpuUs, processRssMb, usableCores } from '../../lib/proc-stat.ts';

/** CPU µs used so far by each process read (by pid), and when they were read. */
export interface CpuReading {
  atMs: number;
  cpuUs: ReadonlyMap<number, number>;
}

/**
 * Each process's CPU between two readings, % of one core: (µs now − µs then) / 1000 /
 * (ms between). A process read only once (it started or ended between them) has none.
 */
export function cpuPctBetween(last: CpuReading, now: CpuReading): Map<number, number> {
  const pct = new Map<number, number>();
  const ms = now.atMs - last.atMs;
  if (ms <= 0) return pct;
  for (const [pid, us] of now.cpuUs) {
    const before = last.cpuUs.get(pid);
    if (before !== undefined) pct.set(pid, ((us - before) / 1000 / ms) * 100);
  }
  return pct;
}

/**
 * Reads the generator process's CPU and the machine's every second. Real k6 reports
 * nothing of its own health without an extension; this is what can be had from outside.
 * The embedded engine is probed too, so both engines' runs carry the same file. With engine
 * workers (`--workers`), the generator is the coordinator and its children, each worker on
 * a core of its own: each worker's CPU is read, and the busiest one's is what it can use.
 */
export class GeneratorProbe {
  readonly #pid: number;
  readonly #engine: 'embedded' | 'k6';
  readonly #cores: number;
  readonly #workers: number | undefined;
  readonly #seconds: GeneratorSecond[] = [];
  #timer: NodeJS.Timeout | undefined;
  #last: (CpuReading & { machine: { busy: number; total: number } | undefined }) | undefined;

  /**
   * `cores`: what k6 may use (default: this machine's); `workers`: the engine workers the
   * load runs on, undefined when it runs in one process.
   */
  constructor(pid: number, engine: 'embedded' | 'k6', options: { cores?: number; workers?: number } = {}) {
    const cores = options.cores ?? usableCores();
    this.#pid = pid;
    this.#engine = engine;
    this.#workers = engine === 'embedded' ? options.workers : undefined;
    // The embedded engine runs its event loop on one core (each worker on one); k6's Go runtime uses them all.
    this.#cores = engine === 'embedded' ? (this.#workers ?? 1) : cores;
  }

  start(intervalMs = 1000): this {
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), intervalMs);
    this.#timer.unref();
    return this;
  }

  /** The seconds sampled so far, oldest first (the probe judges its steps by them while it runs). */
  seconds(): readonly GeneratorSecond[] {
    return this.#seconds;
  }

  /** Stops sampling and returns what was seen (empty seconds when /proc is unreadable). */
  stop(): GeneratorCpuReport {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    return {
      kind: 'plateau.generator-cpu',
      schemaVersion: 1,
      engine: this.#engine,
      usableCores: this.#cores,
      ...(this.#workers === undefined ? {} : { workers: this.#workers }),
      seconds: [...this.#seconds],
    };
  }

  #sample(): void {
    const own = processCpuUs(this.#pid);
    if (own === undefined) return;
    const workers = this.#workers === undefined ? [] : childPids(this.#pid);
    const cpuUs = new Map<number, number>([[this.#pid, own]]);
    for (const pid of workers) {
      const us = processCpuUs(pid);
      if (us !== undefined) cpuUs.set(pid, us);
    }
    const now = { atMs: Date.now(), cpuUs, machine: machineCpuTicks() };
    const last = this.#last;
    this.#last = now;
    if (!last || now.atMs <= last.atMs) return;
    const pct = cpuPctBetween(last, now);
    const cpuPct = [...pct.values()].reduce((a, b) => a + b, 0);
    const workerPcts = workers.flatMap((pid) => (pct.has(pid) ? [round(pct.get(pid)!)] : []));
    const machine = now.machine;
    const machinePct =
      machine && last.machine && machine.total > last.machine.total
        ? ((machine.busy - last.machine.busy) / (machine.total - last.machine.total)) * 100
        : null;
    const rssMb = [this.#pid, ...workers].reduce((sum, pid) => sum + (processRssMb(pid) ?? 0), 0);
    this.#seconds.push({
      // The second the interval mostly covered.
      t: Math.floor((last.atMs + now.atMs) / 2000),
      cpuPct: round(cpuPct),
      usablePct: this.#workers === undefined ? round(cpuPct / this.#cores) : Math.max(0, ...workerPcts),
      ...(this.#workers === undefined ? {} : { workers: workerPcts }),
      machinePct: machinePct === null ? null : round(machinePct),
      ...(rssMb > 0 ? { rssMb } : {}),
    });
  }
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
