// A quick continuous ramp from START to END requests/s over DURATION, aborting (after a
// 10 s grace) once p95 or the failure rate leaves the objective. Each request is tagged
// with its current target rate rounded to BUCKET, so analysis reads it like a stepped run.
// Its job is to suggest where to put the steps of scripts/capacity.ts.
//
// Real k6 and plateau's embedded engine run the same bundle; see scripts/capacity.ts.
import exec from 'k6/execution';
import {
  accountOf,
  breakpointOptions,
  breakpointStepAt,
  readBreakpointSettings,
  requestUrl,
} from './lib/profiles.ts';
import { requestShape, sendTagged } from './lib/request.ts';

const settings = readBreakpointSettings(__ENV);
// The request's body is read once, in the init context (k6 allows open() only there).
const request = requestShape(settings, settings.bodyFile ? open(settings.bodyFile) : null);

export const options = breakpointOptions(settings);

export default async function breakpoint(): Promise<void> {
  const step = breakpointStepAt(exec.instance.currentTestRunDuration / 1000, settings);
  const account = accountOf(settings, exec.scenario.iterationInTest);
  await sendTagged(requestUrl(settings, account), step, request);
}
