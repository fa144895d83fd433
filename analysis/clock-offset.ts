// How far the server's clock is from the client's, from when each saw the steps begin.
import type { SaturationRow, ServerStepReport } from '../contract/index.ts';

/**
 * Server clock minus client clock, s: the median, over the steps both sides saw, of when
 * the server saw a step's first request minus when the client's window for it began.
 * On one machine it is the network's few milliseconds; null when it cannot be told.
 */
export function clockOffset(rows: SaturationRow[], server: ServerStepReport | undefined): number | null {
  if (!server) return null;
  const firsts = new Map(server.steps.map((b) => [b.step, b.firstRequestMs / 1000]));
  const offsets = rows
    .filter((r) => r.offeredPerSec !== null && r.window && firsts.has(r.step))
    .map((r) => firsts.get(r.step)! - r.window!.startS)
    .sort((a, b) => a - b);
  if (offsets.length === 0) return null;
  return offsets[Math.floor(offsets.length / 2)]!;
}
