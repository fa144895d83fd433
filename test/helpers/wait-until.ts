// Waiting on a condition rather than on the clock: the test goes on the moment it holds.

/**
 * Resolves once `check` holds, checking every `everyMs` (default 10); rejects after
 * `timeoutMs` (default 10,000: a deadline for a broken feature, never a step of the test)
 * with an error saying that `what` never happened. `check` may be async (a request to a
 * service under test); it is never called twice at once.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  options: { timeoutMs?: number; everyMs?: number } = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (performance.now() > deadline) throw new Error(`${what}: never happened within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 10));
  }
}
