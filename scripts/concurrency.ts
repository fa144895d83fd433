// The closed-model sweep: VUS_LEVELS concurrent clients, each level held for HOLD, no
// think time. It shows served throughput against concurrency, including the inversion
// where fewer clients complete more work because their requests finish inside the
// deadline (TIMEOUT) instead of expiring in a queue. Steps are tagged c002, c004, …
//
// Real k6 and plateau's embedded engine run the same bundle; see scripts/capacity.ts.
import exec from 'k6/execution';
import {
  accountOf,
  concurrencyOptions,
  concurrencyStepAt,
  readConcurrencySettings,
  requestUrl,
} from './lib/profiles.ts';
import { requestShape, sendTagged } from './lib/request.ts';

const settings = readConcurrencySettings(__ENV);
// The request's body is read once, in the init context (k6 allows open() only there).
const request = requestShape(settings, settings.bodyFile ? open(settings.bodyFile) : null);

export const options = concurrencyOptions(settings);

export default async function concurrency(): Promise<void> {
  const step = concurrencyStepAt(exec.instance.currentTestRunDuration / 1000, settings);
  const account = accountOf(settings, exec.scenario.iterationInTest);
  await sendTagged(requestUrl(settings, account), step, request);
}
