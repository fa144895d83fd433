// meters.ndjson: the readings of a service's published meters, one scrape a line, as a study
// wrote them (harness/sources/meter-source.ts writes it; analysis reads it here).
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { ERROR_CODES, type MeterScrape, PlateauError } from '../../contract/index.ts';

/** The file the readings of a run go to, in its run directory. */
export const METER_LOG_FILE = 'meters.ndjson';

/**
 * The scrapes in a meters.ndjson, in file order. A last line without its end (the harness
 * was killed mid-write) is skipped; a bad line anywhere else is a PlateauError naming the
 * line, since the file is then not what plateau wrote. A missing file yields nothing: the
 * run had no source of meters. Lines of another `kind` are passed over (later versions may
 * write other records beside the scrapes).
 */
export async function* readMeterLog(path: string): AsyncIterable<MeterScrape> {
  const input = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  // One line behind, so the last one can be judged knowing it is the last.
  let pending: { text: string; number: number } | undefined;
  let number = 0;
  try {
    for await (const text of lines) {
      number++;
      if (pending) {
        const scrape = scrapeOfLine(pending.text, pending.number, path, true);
        if (scrape) yield scrape;
      }
      pending = { text, number };
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    if (error instanceof PlateauError) throw error;
    throw new PlateauError(ERROR_CODES.INPUT, `cannot read ${path}: ${(error as Error).message}`, {
      hint: 'check that the run directory is readable',
      cause: error,
    });
  } finally {
    lines.close();
    input.destroy();
  }
  if (pending) {
    const scrape = scrapeOfLine(pending.text, pending.number, path, false);
    if (scrape) yield scrape;
  }
}

/** One line as a scrape; undefined for a blank line, another kind, or a cut-off last line. */
function scrapeOfLine(text: string, number: number, path: string, strict: boolean): MeterScrape | undefined {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (!strict) return undefined;
    throw badLine(path, number, `not JSON (${(error as Error).message})`);
  }
  const record = value as Partial<MeterScrape> | null;
  if (typeof record !== 'object' || record === null || typeof record.kind !== 'string') {
    throw badLine(path, number, 'not a record with a kind');
  }
  if (record.kind !== 'plateau.meter-scrape') return undefined;
  if (
    typeof record.source !== 'string' ||
    typeof record.atMs !== 'number' ||
    !Array.isArray(record.samples)
  ) {
    throw badLine(path, number, 'a meter scrape without source, atMs and samples');
  }
  return record as MeterScrape;
}

function badLine(path: string, number: number, what: string): PlateauError {
  return new PlateauError(ERROR_CODES.INPUT, `${path} line ${number} is ${what}`, {
    hint: 'meters.ndjson is written by plateau; restore it from the run directory as it was written',
  });
}
