// The stepped capacity ramp: ramping-arrival-rate in steps, every request tagged with its
// step, then a drop to the recovery rate.
//
// One script, two engines: real k6 (v1/v2) and plateau's embedded engine both run this
// bundle unchanged. k6 gives each VU its own runtime where http.get blocks; a Node engine
// cannot block, so this script only uses k6's async forms: `export default async function`,
// `await http.asyncRequest(...)`, and `await sleep(s)` (k6's sleep returns undefined, and
// awaiting that is harmless). Never call the synchronous http.get/http.post here.
//
// Upper steps crossing their thresholds (k6 exit code 99) is expected: this script
// measures where the service stops keeping up; it does not gate.

import { sleep } from 'k6';
import exec from 'k6/execution';
import { capacityOptions, readCapacitySettings, requestUrl } from './lib/profiles.ts';
import { sendTagged } from './lib/request.ts';
import { stepAt } from './lib/steps.ts';

const settings = readCapacitySettings(__ENV);

export const options = capacityOptions(settings);

export default async function capacity(): Promise<void> {
  if (settings.jitterSeconds > 0) await sleep(Math.random() * settings.jitterSeconds);
  // The step is read when the request is sent, so client and server agree on it.
  const step = stepAt(exec.instance.currentTestRunDuration / 1000, settings.plan);
  const account = exec.scenario.iterationInTest % settings.accounts;
  await sendTagged(requestUrl(settings, account), step, `GET ${settings.endpoint}`, settings.timeoutSeconds);
}
