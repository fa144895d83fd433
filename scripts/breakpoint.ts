// A quick continuous ramp from START to END requests/s over DURATION, aborting (after a
// 10 s grace) once p95 or the failure rate leaves the objective. Each request is tagged
// with its current target rate rounded to BUCKET, so analysis reads it like a stepped run.
// Its job is to suggest where to put the steps of scripts/capacity.ts.
//
// Async forms only (asyncRequest, awaited sleep), so real k6 and plateau's embedded engine
// run the same bundle; see scripts/capacity.ts.
import exec from 'k6/execution';
import { breakpointOptions, breakpointStepAt, readBreakpointSettings, requestUrl } from './lib/profiles.ts';
import { sendTagged } from './lib/request.ts';

const settings = readBreakpointSettings(__ENV);

export const options = breakpointOptions(settings);

export default async function breakpoint(): Promise<void> {
  const step = breakpointStepAt(exec.instance.currentTestRunDuration / 1000, settings);
  const account = exec.scenario.iterationInTest % settings.accounts;
  await sendTagged(requestUrl(settings, account), step, `GET ${settings.endpoint}`, settings.timeoutSeconds);
}
