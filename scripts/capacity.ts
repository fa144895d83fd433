// The stepped capacity ramp: ramping-arrival-rate in steps, every request tagged with its
// step, then a drop to the recovery rate.
//
// One script, two engines: real k6 (v0.43 and later) and plateau's embedded engine both run
// this bundle unchanged. It uses k6's async forms (`await http.asyncRequest(...)`, `await
// sleep(s)`), which both run as they are; the blocking forms would work too (the embedded
// engine rewrites them to be awaited, docs/engine.md "Blocking calls").
//
// The request is the study's: METHOD, ENDPOINT, HEADERS, BODY_FILE and EXPECT_STATUS
// (docs/scripts.md), GET /statement?account=N on the reference service by default.
//
// Upper steps crossing their thresholds (k6 exit code 99) is expected: this script
// measures where the service stops keeping up; it does not gate.

import { sleep } from 'k6';
import exec from 'k6/execution';
import { accountOf, capacityOptions, readCapacitySettings, requestUrl } from './lib/profiles.ts';
import { requestShape, sendTagged } from './lib/request.ts';
import { stepAt } from './lib/steps.ts';

const settings = readCapacitySettings(__ENV);
// The request's body is read once, in the init context (k6 allows open() only there).
const request = requestShape(settings, settings.bodyFile ? open(settings.bodyFile) : null);

export const options = capacityOptions(settings);

export default async function capacity(): Promise<void> {
  if (settings.jitterSeconds > 0) await sleep(Math.random() * settings.jitterSeconds);
  // The step is read when the request is sent, so client and server agree on it.
  const step = stepAt(exec.instance.currentTestRunDuration / 1000, settings.plan);
  const account = accountOf(settings, exec.scenario.iterationInTest);
  await sendTagged(requestUrl(settings, account), step, request);
}
