// The CI check at the safe limit: constant-arrival-rate at RATE for DURATION, every
// request tagged `check`. Thresholds on p95, failure rate and dropped iterations make k6
// exit 99 only on a real regression: run it at the recorded safe limit, not above.
//
// Real k6 and plateau's embedded engine run the same bundle; see scripts/capacity.ts.
import exec from 'k6/execution';
import {
  accountOf,
  CHECK_TAG,
  constantRateOptions,
  readConstantRateSettings,
  requestUrl,
} from './lib/profiles.ts';
import { requestShape, sendTagged } from './lib/request.ts';

const settings = readConstantRateSettings(__ENV);
// The request's body is read once, in the init context (k6 allows open() only there).
const request = requestShape(settings, settings.bodyFile ? open(settings.bodyFile) : null);

export const options = constantRateOptions(settings);

export default async function constantRate(): Promise<void> {
  const account = accountOf(settings, exec.scenario.iterationInTest);
  await sendTagged(requestUrl(settings, account), CHECK_TAG, request);
}
