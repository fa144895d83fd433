// The table of k6 modules the engine provides, bound to one run.
import type { ModuleTable, ScriptGlobals } from '../loader.ts';
import type { TestRuntime } from '../runtime.ts';
import { createCryptoModule } from './crypto.ts';
import { createDataModule } from './data.ts';
import { createEncodingModule } from './encoding.ts';
import { createExecutionModule } from './execution.ts';
import { createHtmlModule } from './html.ts';
import { createHttpModule } from './http.ts';
import { createK6Module } from './k6.ts';
import { createMetricsModule } from './metrics.ts';
import { createTimersModule } from './timers.ts';

/** Every k6 module of a run, and how to release what they hold (HTTP connections). */
export function createModuleTable(
  runtime: TestRuntime,
  options: () => unknown,
): { modules: ModuleTable; close: () => Promise<void> } {
  const http = createHttpModule(runtime);
  return {
    modules: {
      k6: createK6Module(runtime),
      'k6/http': http.module,
      'k6/execution': createExecutionModule(runtime, options),
      'k6/metrics': createMetricsModule(runtime),
      'k6/timers': createTimersModule(),
      'k6/data': createDataModule(runtime),
      'k6/encoding': createEncodingModule(),
      'k6/crypto': createCryptoModule(),
      'k6/html': createHtmlModule(),
    },
    close: () => http.close(),
  };
}

/** `__ENV`, `__VU` and `__ITER` as the running iteration sees them. */
export function scriptGlobals(runtime: TestRuntime): ScriptGlobals {
  return {
    get env() {
      return (runtime.current()?.scenario?.env ?? runtime.env) as Record<string, string>;
    },
    get vu() {
      return runtime.current()?.vu.idInInstance ?? runtime.initializingVu;
    },
    // k6's __ITER: this VU's iterations so far, across scenarios (exec.vu.iterationInInstance).
    get iter() {
      return runtime.current()?.vuIterationInInstance ?? 0;
    },
  };
}
