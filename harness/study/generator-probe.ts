// Samples the load generator's CPU once a second from /proc while it runs (generator.json).
import type { GeneratorCpuReport, GeneratorSecond } from '../../contract/index.ts';
import { machineCpuTicks, processCpuUs, processRssMb, usableCores } from '../../lib/proc-stat.ts';

/**
 * Reads the generator process's CPU and the machine's every second. Real k6 reports
 * nothing of its own health without an extension; this is what can be had from outside.
 * The embedded engine is probed too, so both engines' runs carry the same file.
 */
export class GeneratorProbe {
  readonly #pid: number;
  readonly #engine: 'embedded' | 'k6';
  readonly #cores: number;
  readonly #seconds: GeneratorSecond[] = [];
  #timer: NodeJS.Timeout | undefined;
  #last: { atMs: number; cpuUs: number; machine: { busy: number; total: number } | undefined } | undefined;

  constructor(pid: number, engine: 'embedded' | 'k6', cores = usableCores()) {
    this.#pid = pid;
    this.#engine = engine;
    // The embedded engine runs its event loop on one core; k6's Go runtime uses them all.
    this.#cores = engine === 'embedded' ? 1 : cores;
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
      seconds: [...this.#seconds],
    };
  }

  #sample(): void {
    const cpuUs = processCpuUs(this.#pid);
    if (cpuUs === undefined) return;
    const now = Date.now();
    const machine = machineCpuTicks();
    const last = this.#last;
    this.#last = { atMs: now, cpuUs, machine };
    if (!last || now <= last.atMs) return;
    const cpuPct = ((cpuUs - last.cpuUs) / 1000 / (now - last.atMs)) * 100;
    const machinePct =
      machine && last.machine && machine.total > last.machine.total
        ? ((machine.busy - last.machine.busy) / (machine.total - last.machine.total)) * 100
        : null;
    this.#seconds.push({
      // The second the interval mostly covered.
      t: Math.floor((last.atMs + now) / 2000),
      cpuPct: round(cpuPct),
      usablePct: round(cpuPct / this.#cores),
      machinePct: machinePct === null ? null : round(machinePct),
      ...rss(this.#pid),
    });
  }
}

function rss(pid: number): { rssMb?: number } {
  const mb = processRssMb(pid);
  return mb === undefined ? {} : { rssMb: mb };
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
