// `--out json=…`: k6's NDJSON output (k6 internal/output/json).
import type { PlateauError } from '../../contract/index.ts';
import type { Metric, SampleContainer } from '../metrics/metric.ts';
import type { Output } from './output.ts';
import { ChunkedWriter, type OutputFile, openOutputFile } from './output-file.ts';
import { formatRfc3339 } from './time-format.ts';

/** k6 flushes its JSON output every 200 ms. */
const FLUSH_INTERVAL_MS = 200;

/** The `Metric` line written just before a metric's first `Point`. */
export function metricLine(metric: Metric): string {
  const thresholds = metric.thresholds.map((t) =>
    t.abortOnFail ? { threshold: t.source, abortOnFail: true, delayAbortEval: t.delayAbortEval } : t.source,
  );
  const submetrics =
    metric.submetrics.length === 0
      ? null
      : metric.submetrics.map((s) => ({ name: s.name, suffix: s.suffix, tags: Object.fromEntries(s.tags) }));
  return JSON.stringify({
    type: 'Metric',
    data: { name: metric.name, type: metric.type, contains: metric.contains, thresholds, submetrics },
    metric: metric.name,
  });
}

/**
 * What a `Point` line of `container` holds after its metric name and before its value, and
 * after its value: `{"metric":…,"type":"Point","data":{"time":…,"value":…,"tags":{…}}}`,
 * tags with sorted keys, RFC 3339 nanosecond time, `metadata` when there is any. The
 * samples of one event share all of it, so it is serialized once per event.
 */
export function pointParts(container: SampleContainer): { head: string; tail: string } {
  const tags: Record<string, string> = {};
  for (const key of Object.keys(container.tags).sort()) tags[key] = container.tags[key]!;
  const metadata =
    container.metadata && Object.keys(container.metadata).length > 0
      ? `,"metadata":${JSON.stringify(container.metadata)}`
      : '';
  return {
    head: `,"type":"Point","data":{"time":${JSON.stringify(formatRfc3339(container.timeMs, true))},"value":`,
    tail: `,"tags":${JSON.stringify(tags)}${metadata}}}\n`,
  };
}

/** A number as JSON.stringify writes it (null when not finite). */
function jsonNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/** Writes samples as NDJSON; `-` is stdout and a `.gz` suffix gzips. */
export class JsonOutput implements Output {
  readonly #fileName: string;
  readonly #announced = new Set<Metric>();
  /** `{"metric":"name"` per metric. */
  readonly #openings = new Map<Metric, string>();
  #file: OutputFile | undefined;
  #writer: ChunkedWriter | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(fileName: string) {
    this.#fileName = fileName === '' ? '-' : fileName;
  }

  description(): string {
    return `json (${this.#fileName})`;
  }

  async start(onFailure?: (failure: PlateauError) => void): Promise<void> {
    this.#file = await openOutputFile(this.#fileName, 'JSON', { onFailure });
    this.#writer = new ChunkedWriter(this.#file);
    this.#timer = setInterval(() => this.#writer?.flush(), FLUSH_INTERVAL_MS);
    this.#timer.unref();
  }

  addMetricSamples(containers: readonly SampleContainer[]): void {
    const writer = this.#writer;
    if (!writer) return;
    // One string per event into the output's chunks: a line object and JSON.stringify per
    // sample, and one join of every line per flush, made this output drop starts at a
    // few thousand requests/s.
    for (const container of containers) {
      const { head, tail } = pointParts(container);
      let text = '';
      for (let i = 0; i < container.metrics.length; i++) {
        const metric = container.metrics[i]!;
        let opening = this.#openings.get(metric);
        if (!opening) {
          opening = `{"metric":${JSON.stringify(metric.name)}`;
          this.#openings.set(metric, opening);
        }
        if (!this.#announced.has(metric)) {
          this.#announced.add(metric);
          text += `${metricLine(metric)}\n`;
        }
        text += `${opening}${head}${jsonNumber(container.values[i]!)}${tail}`;
      }
      writer.append(text);
    }
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#writer?.flush();
    await this.#file?.close();
  }
}
