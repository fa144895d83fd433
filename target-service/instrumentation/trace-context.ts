// Carries the current request's trace across awaits (AsyncLocalStorage).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestTrace } from './request-trace.ts';

const storage = new AsyncLocalStorage<RequestTrace>();

/** Runs `fn` with `trace` as the current trace for everything it awaits or schedules. */
export function runWithTrace<T>(trace: RequestTrace, fn: () => T): T {
  return storage.run(trace, fn);
}

/** The trace of the request whose code is running now, if any. */
export function currentTrace(): RequestTrace | undefined {
  return storage.getStore();
}
