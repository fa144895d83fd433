// The closed-model sweep: VUS_LEVELS concurrent clients, each level held for HOLD, no
// think time. It shows served throughput against concurrency, including the inversion
// where fewer clients complete more work because their requests finish inside the
// deadline (TIMEOUT) instead of expiring in a queue. Steps are tagged c002, c004, …
//
// Async forms only (asyncRequest, awaited sleep), so real k6 and plateau's embedded engine
// run the same bundle; see scripts/capacity.ts.
import exec from 'k6/execution';
import {
  concurrencyOptions,
  concurrencyStepAt,
  readConcurrencySettings,
  requestUrl,
} from './lib/profiles.ts';
import { sendTagged } from './lib/request.ts';

const settings = readConcurrencySettings(__ENV);

export const options = concurrencyOptions(settings);

export default async function concurrency(): Promise<void> {
  const step = concurrencyStepAt(exec.instance.currentTestRunDuration / 1000, settings);
  const account = exec.scenario.iterationInTest % settings.accounts;
  await sendTagged(requestUrl(settings, account), step, `GET ${settings.endpoint}`, settings.timeoutSeconds);
}
