// A cheap, one-shot "stop now" signal for iterations.
//
// AbortSignal would do, but Node's EventTarget scans its listener list on every add and
// remove; with one listener per in-flight iteration on a scenario-wide signal that becomes
// quadratic at thousands of iterations per second. A Set is O(1) both ways.

/** Fires its listeners once, when aborted. */
export class Interrupt {
  #aborted = false;
  readonly #listeners = new Set<() => void>();

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Calls `listener` on abort (at once if already aborted); returns its remover. */
  onAbort(listener: () => void): () => void {
    if (this.#aborted) {
      listener();
      return () => undefined;
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    const listeners = [...this.#listeners];
    this.#listeners.clear();
    for (const listener of listeners) listener();
  }

  /** An interrupt that fires when any of `parents` fires. */
  static any(...parents: Interrupt[]): Interrupt {
    const child = new Interrupt();
    for (const parent of parents) parent.onAbort(() => child.abort());
    return child;
  }

  /** An AbortSignal that aborts with this interrupt (for APIs that take signals). */
  toSignal(): AbortSignal {
    const controller = new AbortController();
    this.onAbort(() => controller.abort());
    return controller.signal;
  }

  /** An interrupt that follows an AbortSignal. */
  static from(signal: AbortSignal): Interrupt {
    const interrupt = new Interrupt();
    if (signal.aborted) interrupt.abort();
    else signal.addEventListener('abort', () => interrupt.abort(), { once: true });
    return interrupt;
  }
}
