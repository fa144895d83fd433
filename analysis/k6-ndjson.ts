// Streams k6 NDJSON output (`--out json`, old and new envelopes, plain or .gz).
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { ERROR_CODES, PlateauError } from '../contract/index.ts';
import type { ClientSample, ReadStats } from './client-sample.ts';

/**
 * Reads `Point` lines into ClientSamples; `Metric` lines and unparseable lines (a truncated
 * last line) are skipped, the latter counted.
 */
export async function readK6Ndjson(
  path: string,
  onSample: (sample: ClientSample) => void,
): Promise<ReadStats> {
  const stats: ReadStats = { rows: 0, skipped: 0, nulBytes: 0 };
  const source = createReadStream(path);
  const opened = new Promise<void>((resolve, reject) => {
    source.once('open', () => resolve());
    source.once('error', (error) =>
      reject(
        new PlateauError(ERROR_CODES.INPUT, `cannot read ${path}: ${error.message}`, {
          hint: 'check the path',
          cause: error,
        }),
      ),
    );
  });
  await opened;
  const input = path.endsWith('.gz') ? source.pipe(createGunzip()) : source;
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
      });
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'Z_BUF_ERROR' && code !== 'Z_DATA_ERROR') throw error;
    stats.skipped++;
  }
  return stats;
}
