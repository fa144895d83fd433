// The closed-model sweep: VUS_LEVELS concurrent clients, each level held for HOLD, no
// think time, then (RECOVERY_VUS > 0) a recovery at fewer clients. It shows goodput
// against concurrency, including the inversion where fewer clients complete more work
// because their requests finish inside the deadline (TIMEOUT) instead of expiring in a
// queue. Steps are tagged c002, c004, …, then recovery.
//
// A failed attempt is retried up to RETRIES times: after a 503/429's Retry-After, else
// after a jittered exponential backoff (retryDelaySeconds). Every request carries the tag
// `attempt` (1 for the first), so analysis counts the retries.
//
// Real k6 and plateau's embedded engine run the same bundle; see scripts/capacity.ts.
import { sleep } from 'k6';
import exec from 'k6/execution';
import {
  accountOf,
  concurrencyOptions,
  concurrencyStepAt,
  readConcurrencySettings,
  requestUrl,
  retryDelaySeconds,
} from './lib/profiles.ts';
import { requestShape, sendTagged } from './lib/request.ts';

const settings = readConcurrencySettings(__ENV);
// The request's body is read once, in the init context (k6 allows open() only there).
const request = requestShape(settings, settings.bodyFile ? open(settings.bodyFile) : null);

export const options = concurrencyOptions(settings);

export default async function concurrency(): Promise<void> {
  const account = accountOf(settings, exec.scenario.iterationInTest);
  const url = requestUrl(settings, account);
  for (let attempt = 1; ; attempt++) {
    // Each attempt is tagged with the level current when it is sent.
    const step = concurrencyStepAt(exec.instance.currentTestRunDuration / 1000, settings);
    const response = await sendTagged(url, step, request, { attempt: String(attempt) });
    if (attempt > settings.retries) return;
    const wait = retryDelaySeconds(attempt, response.status, response.headers['Retry-After'], Math.random());
    if (wait === null) return;
    await sleep(wait);
  }
}
