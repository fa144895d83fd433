// The engine's own health, sampled every second: event-loop lag and CPU.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { TestRuntime } from './js/runtime.ts';

/**
 * Emits, every second, `vus` and `vus_max` (as k6 does) and plateau's `engine_lag_ms`
 * (p99 event-loop delay over the second) and `engine_cpu_pct` (the engine process's CPU,
 * % of one core). Analysis uses the last two to tell a generator limit from a service limit.
 */
/** Sampling interval of the event-loop delay monitor, ms; its reports include it. */
const LAG_RESOLUTION_MS = 10;

export function startHealthTicker(runtime: TestRuntime, intervalMs = 1000): () => void {
  const delay = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  delay.enable();
  let lastCpu = process.cpuUsage();
  let lastWall = performance.now();
  const timer = setInterval(() => {
    const tags = runtime.runTags;
    runtime.emitBuiltin('vus', runtime.vusActive, tags);
    runtime.emitBuiltin('vus_max', runtime.vusInitialized, tags);
    const cpu = process.cpuUsage(lastCpu);
    const wall = performance.now();
    const cpuPct = ((cpu.user + cpu.system) / 1000 / (wall - lastWall)) * 100;
    lastCpu = process.cpuUsage();
    lastWall = wall;
    // The monitor's timer fires every resolution ms; only the time beyond that is lag.
    const lagMs = delay.count > 0 ? Math.max(0, delay.percentile(99) / 1e6 - LAG_RESOLUTION_MS) : 0;
    delay.reset();
    runtime.emitBuiltin('engine_lag_ms', Math.round(lagMs * 1000) / 1000, tags);
    runtime.emitBuiltin('engine_cpu_pct', Math.round(cpuPct * 10) / 10, tags);
  }, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    delay.disable();
  };
}
