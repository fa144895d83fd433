// The resources of a run's published meters: meters.ndjson read into a ResourcesReport, with
// the notes a reader of the record needs.
import { existsSync } from 'node:fs';
import type { MeterScrape, MeterSourceStatus, ResourcesReport, RunManifest } from '../contract/index.ts';
import { readMeterLog } from './resources/meter-log.ts';
import { resourcesFromScrapes } from './resources/resource-series.ts';

/**
 * The resources in a run's meters.ndjson (none when the file is absent), with the
 * resources declared in its run.json, and the notes a reader of the record needs: sources
 * that failed, meters seen but not understood, declared series that never appeared.
 */
export async function readResources(
  path: string,
  manifest: RunManifest | undefined,
): Promise<{ report: ResourcesReport; notes: string[] } | undefined> {
  if (!existsSync(path)) return undefined;
  const declared = manifest?.meters?.declared ?? [];
  const scrapes: MeterScrape[] = [];
  for await (const scrape of readMeterLog(path)) scrapes.push(scrape);
  const recognised = resourcesFromScrapes(scrapes, declared);
  const sources = manifest?.meters?.sources ?? [];
  const notes = [...recognised.notes, ...sourceNotes(sources)];
  if (recognised.resources.length === 0 && sources.length > 0) {
    notes.push(
      `no resource was recognised in the meters read (${sources.map((s) => s.source).join(', ')}): name them in plateau.config's resources, or check that the service publishes its pools under their standard names (docs/meters.md)`,
    );
  }
  return {
    report: {
      kind: 'plateau.resources',
      schemaVersion: 1,
      sources,
      resources: recognised.resources,
      notes,
    },
    notes,
  };
}

/** A source that failed some of its readings, or had more series than its cap, in words (the meters no family reads are listed in run.json, not the record). */
export function sourceNotes(sources: MeterSourceStatus[]): string[] {
  const notes: string[] = [];
  for (const s of sources) {
    if (s.failures > 0) {
      notes.push(
        `${s.source}: ${s.failures} of ${s.attempts} readings failed (${s.firstError ?? 'unknown'}${s.lastError && s.lastError !== s.firstError ? `; last: ${s.lastError}` : ''}): seconds without a reading are left out, not guessed`,
      );
    }
    if (s.seriesCapped) {
      notes.push(
        `${s.source}: more than ${s.seriesCapped.cap} series in a reading; ${s.seriesCapped.dropped} were dropped (a cardinality explosion: a label such as a URL or a user id on a meter)`,
      );
    }
  }
  return notes;
}
