// Benchmark: what a VU's own instance of a script costs (its init context run again, as
// k6 gives each VU its own runtime): time and heap per instance, for COUNT instances made
// in a row of SCRIPT (default: the bundled capacity script; run `plateau build` first).
//
//   node --expose-gc --import tsx bench/vu-instance-cost.ts [script=dist/k6/capacity.js] [count=4000]
import { loadScript } from '../engine/js/loader.ts';
import { createModuleTable, scriptGlobals } from '../engine/js/modules/index.ts';
import { TestRuntime } from '../engine/js/runtime.ts';
import { MetricRegistry } from '../engine/metrics/registry.ts';

const scriptPath = process.argv[2] ?? 'dist/k6/capacity.js';
const count = Number(process.argv[3] ?? 4000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (npm run bench:vu-instances does)');
const silent = { log: () => undefined };
const runtime = new TestRuntime({
  registry: new MetricRegistry(),
  logger: silent,
  env: {},
  runTags: {},
  outputs: [],
});
const table = createModuleTable(runtime, () => ({}));
const script = await loadScript(scriptPath, table.modules, scriptGlobals(runtime), silent);
gc();
const heapBefore = process.memoryUsage().heapUsed;
const started = performance.now();
const instances: unknown[] = [];
for (let i = 0; i < count; i++) instances.push(script.newInstance());
const ms = performance.now() - started;
gc();
const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
process.stdout.write(
  `${JSON.stringify({ script: scriptPath, count, rewritten: script.rewritten, usPerInstance: Math.round((ms * 1000) / count), kbPerInstance: Math.round((heapMb * 1000) / count), totalMs: Math.round(ms), heapMb: Math.round(heapMb), kept: instances.length })}\n`,
);
await table.close();
