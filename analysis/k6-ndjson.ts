// Streams k6 NDJSON output (`--out json`, old and new envelopes, plain or .gz).
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { ClientSample, ReadStats } from './client-sample.ts';

/**
 * Reads `Point` lines of k6 NDJSON text (already decompressed) into ClientSamples; `Metric` lines and unparseable lines (a truncated
 * last line) are skipped, the latter counted.
 */
export async function readK6Ndjson(
  input: Readable,
  onSample: (sample: ClientSample) => void,
): Promise<ReadStats> {
  const stats: ReadStats = { rows: 0, skipped: 0, nulBytes: 0 };
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const raw of lines) {
      const line = raw.replaceAll('\0', '');
      if (line.trim() === '') continue;
      let parsed: {
        type?: string;
        metric?: string;
        data?: { time?: string; value?: number; tags?: Record<string, string> | null };
      };
      try {
        parsed = JSON.parse(line);
      } catch {
        stats.skipped++;
        continue;
      }
      if (parsed.type !== 'Point' || !parsed.metric || !parsed.data) continue;
      const tags = parsed.data.tags ?? {};
      const timeS = Date.parse(parsed.data.time ?? '') / 1000;
      if (!Number.isFinite(timeS) || typeof parsed.data.value !== 'number') {
        stats.skipped++;
        continue;
      }
      stats.rows++;
      onSample({
        metric: parsed.metric,
        timeS,
        value: parsed.data.value,
        status: tags.status || undefined,
        errorCode: tags.error_code || undefined,
        scenario: tags.scenario || undefined,
        step: tags.step || undefined,
        attempt: tags.attempt || undefined,
      });
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'Z_BUF_ERROR' && code !== 'Z_DATA_ERROR') throw error;
    stats.skipped++;
  }
  return stats;
}
