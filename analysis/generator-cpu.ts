// The generator's CPU from generator.json, for an engine (real k6) that reports none itself.
import type { GeneratorCpuReport, SaturationRow } from '../contract/index.ts';

/** Machine-wide busy CPU, mean over a step, at which the shared machine is noted as a limit. */
export const MACHINE_SATURATED_PCT = 95;

/**
 * Gives the saturation table the generator's CPU from generator.json where the k6 output
 * has none (real k6 writes no engine_cpu_pct), as % of the cores it can use, so that a
 * saturated k6 is marked like a saturated engine. Returns what to note of the machine.
 */
export function useGeneratorCpu(
  cpuPctBySecond: Map<number, number>,
  report: GeneratorCpuReport,
): (rows: SaturationRow[]) => string[] {
  if (cpuPctBySecond.size === 0) {
    for (const s of report.seconds)
      cpuPctBySecond.set(s.t, Math.max(cpuPctBySecond.get(s.t) ?? 0, s.usablePct));
  }
  return (rows) => {
    const busy = rows.filter((r) => {
      if (r.offeredPerSec === null || !r.window) return false;
      const inStep = report.seconds.filter(
        (s) => s.t >= Math.floor(r.window!.startS) && s.t < r.window!.endS,
      );
      const mean = inStep.reduce((a, s) => a + (s.machinePct ?? 0), 0) / Math.max(1, inStep.length);
      return inStep.length > 0 && mean >= MACHINE_SATURATED_PCT;
    });
    return busy.length > 0
      ? [
          `the machine's CPU was saturated during ${busy.map((r) => r.step).join(', ')} (≥ ${MACHINE_SATURATED_PCT}% of every core): the generator, the service and the database competed for it, so those steps measure the machine as much as the service`,
        ]
      : [];
  };
}
