// `--out json=…`: k6's NDJSON output (k6 internal/output/json).
import type { Metric, SampleContainer } from '../metrics/metric.ts';
import type { Output } from './output.ts';
import { type OutputFile, openOutputFile } from './output-file.ts';
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

/** The `Point` line of `container`'s i-th sample: tags with sorted keys, RFC 3339 nanosecond time. */
export function pointLine(container: SampleContainer, i: number): string {
  const tags: Record<string, string> = {};
  for (const key of Object.keys(container.tags).sort()) tags[key] = container.tags[key]!;
  const data: Record<string, unknown> = {
    time: formatRfc3339(container.timeMs, true),
    value: container.values[i],
    tags,
  };
  if (container.metadata && Object.keys(container.metadata).length > 0) data.metadata = container.metadata;
  return JSON.stringify({ metric: container.metrics[i]!.name, type: 'Point', data });
}

/** Writes samples as NDJSON; `-` is stdout and a `.gz` suffix gzips. */
export class JsonOutput implements Output {
  readonly #fileName: string;
  readonly #announced = new Set<Metric>();
  #lines: string[] = [];
  #file: OutputFile | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(fileName: string) {
    this.#fileName = fileName === '' ? '-' : fileName;
  }

  description(): string {
    return `json (${this.#fileName})`;
  }

  async start(): Promise<void> {
    this.#file = await openOutputFile(this.#fileName, 'JSON');
    this.#timer = setInterval(() => this.#flush(), FLUSH_INTERVAL_MS);
    this.#timer.unref();
  }

  addMetricSamples(containers: readonly SampleContainer[]): void {
    for (const container of containers) {
      for (let i = 0; i < container.metrics.length; i++) {
        const metric = container.metrics[i]!;
        if (!this.#announced.has(metric)) {
          this.#announced.add(metric);
          this.#lines.push(metricLine(metric));
        }
        this.#lines.push(pointLine(container, i));
      }
    }
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#flush();
    await this.#file?.close();
  }

  #flush(): void {
    if (this.#lines.length === 0) return;
    const text = `${this.#lines.join('\n')}\n`;
    this.#lines = [];
    this.#file?.write(text);
  }
}
