// `plateau engine schedule`: print the planned starts of a script without running it.
import { consolidateOptions } from './config/options.ts';
import { arrivalPlan } from './executor/registry.ts';
import { loadScript } from './js/loader.ts';
import { stderrLogger } from './js/logger.ts';
import { createModuleTable, scriptGlobals } from './js/modules/index.ts';
import { TestRuntime } from './js/runtime.ts';
import { MetricRegistry } from './metrics/registry.ts';
import { ExecutionTuple, parseSegment, parseSequence } from './schedule/execution-segment.ts';

/** Formats integer ns as ms with exactly 6 decimals, without float rounding. */
export function formatOffsetMs(ns: number): string {
  return `${Math.floor(ns / 1e6)}.${String(ns % 1e6).padStart(6, '0')}`;
}

/**
 * Loads the script (its init code runs; nothing is sent), then writes, scenario by
 * scenario, a `# scenario …` line and each planned start offset in ms. VU-based scenarios
 * have no planned starts (closed model) and say so.
 */
export async function printSchedule(options: {
  script: string;
  env: Record<string, string>;
  executionSegment?: string;
  executionSegmentSequence?: string;
  write: (text: string) => void;
}): Promise<void> {
  const env = { ...(process.env as Record<string, string>), ...options.env };
  const runtime = new TestRuntime({
    registry: new MetricRegistry(),
    logger: stderrLogger(Date.now()),
    env,
    runTags: {},
    outputs: [],
  });
  const table = createModuleTable(runtime, () => undefined);
  try {
    const { exports } = await loadScript(
      options.script,
      table.modules,
      scriptGlobals(runtime),
      runtime.logger,
    );
    const consolidated = consolidateOptions(exports.options, {
      ...(options.executionSegment ? { executionSegment: options.executionSegment } : {}),
      ...(options.executionSegmentSequence
        ? { executionSegmentSequence: options.executionSegmentSequence }
        : {}),
    });
    const tuple = ExecutionTuple.create(
      consolidated.executionSegment ? parseSegment(consolidated.executionSegment) : undefined,
      consolidated.executionSegmentSequence
        ? parseSequence(consolidated.executionSegmentSequence)
        : undefined,
    );
    for (const scenario of consolidated.scenarios) {
      options.write(`# scenario ${scenario.name} (${scenario.executor})\n`);
      const plan = arrivalPlan(scenario);
      if (!plan) {
        options.write('# no planned starts: VU-based executors start iterations as VUs become free\n');
        continue;
      }
      const maxVUs = plan.maxVUs(scenario);
      if (!tuple.hasWork(maxVUs)) {
        options.write('# no work: this segment gets none of maxVUs\n');
        continue;
      }
      const starts = plan.starts(scenario, tuple.resegmentByValue(maxVUs));
      let chunk = '';
      for (const start of starts) {
        chunk += `${formatOffsetMs(start.offsetNs)}\n`;
        if (chunk.length > 65_536) {
          options.write(chunk);
          chunk = '';
        }
      }
      options.write(chunk);
    }
  } finally {
    await table.close();
  }
}
