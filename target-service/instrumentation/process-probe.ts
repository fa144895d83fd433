// Time and process figures, injectable so tests can drive them.
import { type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** Wall-clock time in epoch milliseconds, with sub-millisecond precision. */
export interface Clock {
  now(): number;
}

/** Cumulative process CPU and event-loop figures. */
export interface ProcessProbe {
  /** CPU time used so far, µs (process.cpuUsage). */
  cpu(): { user: number; system: number };
  /** Event-loop idle and active time so far, ms (performance.eventLoopUtilization). */
  eventLoop(): { idle: number; active: number };
}

/** performance.timeOrigin + performance.now(): monotonic within the process, epoch-based. */
export const systemClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
};

export const systemProbe: ProcessProbe = {
  cpu: () => process.cpuUsage(),
  eventLoop: () => {
    const elu = performance.eventLoopUtilization();
    return { idle: elu.idle, active: elu.active };
  },
};

/** A reading of the probe and the clock taken at one moment. */
export interface ProcessMark {
  wallMs: number;
  userUs: number;
  systemUs: number;
  idleMs: number;
  activeMs: number;
}

export function takeMark(clock: Clock, probe: ProcessProbe): ProcessMark {
  const cpu = probe.cpu();
  const loop = probe.eventLoop();
  return {
    wallMs: clock.now(),
    userUs: cpu.user,
    systemUs: cpu.system,
    idleMs: loop.idle,
    activeMs: loop.active,
  };
}

/** Sums of CPU, wall and event-loop time over the intervals added to it. */
export class ProcessWindow {
  wallMs = 0;
  userUs = 0;
  systemUs = 0;
  idleMs = 0;
  activeMs = 0;

  /** Adds the interval between two marks. */
  addBetween(from: ProcessMark, to: ProcessMark): void {
    this.wallMs += to.wallMs - from.wallMs;
    this.userUs += to.userUs - from.userUs;
    this.systemUs += to.systemUs - from.systemUs;
    this.idleMs += to.idleMs - from.idleMs;
    this.activeMs += to.activeMs - from.activeMs;
  }

  /** This window plus an in-progress interval, without changing this window. */
  plus(from: ProcessMark, to: ProcessMark): ProcessWindow {
    const sum = new ProcessWindow();
    Object.assign(sum, this);
    sum.addBetween(from, to);
    return sum;
  }

  /** CPU % of one core over the window: (user + system) ÷ wall × 100. */
  get cpuPct(): number {
    return this.wallMs > 0 ? ((this.userUs + this.systemUs) / 1000 / this.wallMs) * 100 : 0;
  }

  get eventLoopUtilization(): number {
    const total = this.idleMs + this.activeMs;
    return total > 0 ? this.activeMs / total : 0;
  }
}

/** Event-loop delay percentiles over a window, ms. */
export interface LoopDelaySummary {
  p50: number;
  p95: number;
  max: number;
}

/** Event-loop delay since the last `take()`, split into windows by its caller. */
export interface LoopDelayMonitor {
  /** The delay since the last take, and starts a new window. */
  take(): LoopDelaySummary | null;
  /** The delay since the last take, without starting a new window. */
  peek(): LoopDelaySummary | null;
  close(): void;
}

/**
 * Node's own event-loop delay histogram (perf_hooks.monitorEventLoopDelay). Its timer
 * fires every `resolutionMs`, so a delay shorter than that is not seen; 10 ms is Node's
 * default and costs one timer wake-up per 10 ms.
 */
export function systemLoopDelayMonitor(resolutionMs = 10): LoopDelayMonitor {
  const histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  const summary = (): LoopDelaySummary | null => {
    if (histogram.count === 0) return null;
    // The histogram is in ns and counts the timer's own interval: subtract it for the delay.
    const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - resolutionMs) * 10) / 10);
    return { p50: ms(histogram.percentile(50)), p95: ms(histogram.percentile(95)), max: ms(histogram.max) };
  };
  return {
    take() {
      const result = summary();
      histogram.reset();
      return result;
    },
    peek: summary,
    close: () => histogram.disable(),
  };
}
