// A clock and process probe that tests drive by hand.
import type { Clock, ProcessProbe } from '../../target-service/instrumentation/process-probe.ts';

/** Epoch-ms clock that only moves when told to. */
export class FakeClock implements Clock {
  constructor(public ms = 1_800_000_000_000) {}
  now(): number {
    return this.ms;
  }
  /** Moves time forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** CPU and event-loop counters that tests bump by hand. */
export class FakeProbe implements ProcessProbe {
  userUs = 0;
  systemUs = 0;
  idleMs = 0;
  activeMs = 0;
  cpu() {
    return { user: this.userUs, system: this.systemUs };
  }
  eventLoop() {
    return { idle: this.idleMs, active: this.activeMs };
  }
}
