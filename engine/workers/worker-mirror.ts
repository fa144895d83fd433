// The coordinator's copy of one worker's metrics, kept whole from the changes it is sent.
import type { SinkState } from '../metrics/sinks.ts';
import type { TrendPage } from '../metrics/trend-histogram.ts';
import type { MetricState } from './metrics-state.ts';

type TrendState = Extract<SinkState, { type: 'trend' }>;

/** A sink as last sent; a trend's pages by key, each the newest copy received. */
interface HeldSink {
  state: SinkState;
  pages: Map<number, Float64Array> | undefined;
}

interface HeldMetric {
  metric: Omit<MetricState, 'sink' | 'submetrics'>;
  sink: HeldSink;
  submetrics: Map<string, HeldSink>;
}

/**
 * One worker's metrics as the coordinator knows them. Workers send every sink whole but a
 * trend's histogram only in the pages that changed (MetricsSnapshotter): `apply` replaces
 * what it is given and keeps the other pages, so `states()` is always the worker's whole
 * metrics as of its last snapshot, even once the worker is gone.
 */
export class WorkerMirror {
  readonly #metrics = new Map<string, HeldMetric>();

  /** Takes a snapshot: each metric's newest state, a trend's pages merged by key. */
  apply(states: readonly MetricState[]): void {
    for (const { sink, submetrics, ...metric } of states) {
      let held = this.#metrics.get(metric.name);
      if (!held) {
        held = { metric, sink: { state: sink, pages: undefined }, submetrics: new Map() };
        this.#metrics.set(metric.name, held);
      }
      hold(held.sink, sink);
      for (const sub of submetrics) {
        let heldSub = held.submetrics.get(sub.suffix);
        if (!heldSub) {
          heldSub = { state: sub.sink, pages: undefined };
          held.submetrics.set(sub.suffix, heldSub);
        }
        hold(heldSub, sub.sink);
      }
    }
  }

  /** The worker's whole metrics (every page of every trend), ready to merge. */
  states(): MetricState[] {
    return [...this.#metrics.values()].map((held) => ({
      ...held.metric,
      sink: whole(held.sink),
      submetrics: [...held.submetrics].map(([suffix, sub]) => ({ suffix, sink: whole(sub) })),
    }));
  }
}

function hold(held: HeldSink, state: SinkState): void {
  held.state = state;
  if (state.type !== 'trend') return;
  held.pages ??= new Map();
  // A page's counts only grow: the newest copy replaces the one held.
  for (const page of state.pages) held.pages.set(page.key, page.counts);
}

function whole(held: HeldSink): SinkState {
  if (held.state.type !== 'trend') return held.state;
  const pages: TrendPage[] = [...(held.pages ?? [])].map(([key, counts]) => ({ key, counts }));
  return { ...(held.state as TrendState), pages };
}
