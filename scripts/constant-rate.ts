// The CI check at the safe limit: constant-arrival-rate at RATE for DURATION, every
// request tagged `check`. Thresholds on p95, failure rate and dropped iterations make k6
// exit 99 only on a real regression: run it at the recorded safe limit, not above.
//
// Async forms only (asyncRequest, awaited sleep), so real k6 and plateau's embedded engine
// run the same bundle; see scripts/capacity.ts.
import exec from 'k6/execution';
import { CHECK_TAG, constantRateOptions, readConstantRateSettings, requestUrl } from './lib/profiles.ts';
import { sendTagged } from './lib/request.ts';

const settings = readConstantRateSettings(__ENV);

export const options = constantRateOptions(settings);

export default async function constantRate(): Promise<void> {
  const account = exec.scenario.iterationInTest % settings.accounts;
  await sendTagged(
    requestUrl(settings, account),
    CHECK_TAG,
    `GET ${settings.endpoint}`,
    settings.timeoutSeconds,
  );
}
