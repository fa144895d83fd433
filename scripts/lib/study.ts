// `plateau/k6`: what your own k6 script imports to be a plateau study. plateau passes the
// study's settings as -e variables (STEPS, HOLD, RAMP, RECOVERY_RATE, RECOVERY, P95_MS,
// FAIL_RATE, PREALLOCATED_VUS, MAX_VUS, BASE_URL; RATE and DURATION for `plateau check`);
// this module reads them once, in the init context, and gives the script the k6 options of
// the stepped ramp (or of the constant-rate check) and each request's step tag. Typed
// against @types/k6; the bundle runs on k6 v0.43+ and on plateau's embedded engine.
//
//   import http from 'k6/http';
//   import { study, studyOptions, tagged } from 'plateau/k6';
//   export const options = studyOptions();
//   export default function () {
//     http.post(`${study.baseUrl}/api/orders`, JSON.stringify({ sku: 'a1' }), tagged({ headers: { 'Content-Type': 'application/json' } }));
//   }
import exec from 'k6/execution';
import type { Params } from 'k6/http';
import type { Options } from 'k6/options';
import {
  type CapacitySettings,
  CHECK_TAG,
  type ConstantRateSettings,
  capacityOptions,
  constantRateOptions,
  readCapacitySettings,
  readConstantRateSettings,
} from './profiles.ts';
import { stepAt } from './steps.ts';

/** `study` for `plateau run` (the stepped ramp), `check` for `plateau check` (PLATEAU_MODE). */
const mode = __ENV.PLATEAU_MODE === 'check' ? 'check' : 'study';

/** The study's settings: the ramp's plan, objectives, VUs and the target's BASE_URL. */
export const study: CapacitySettings | ConstantRateSettings =
  mode === 'check' ? readConstantRateSettings(__ENV) : readCapacitySettings(__ENV);

/**
 * The k6 options of the study: its scenario (the stepped ramp, or the check's constant
 * rate), and thresholds per step. Spread your own options over them
 * (`{ ...studyOptions(), discardResponseBodies: false }`), but keep the scenario.
 */
export function studyOptions(): Options {
  return mode === 'check'
    ? constantRateOptions(study as ConstantRateSettings)
    : capacityOptions(study as CapacitySettings);
}

/** The step now: `r020`, …, `drain`, `recovery` (or `check`), read when a request is sent. */
export function currentStep(): string {
  if (mode === 'check') return CHECK_TAG;
  return stepAt(exec.instance.currentTestRunDuration / 1000, (study as CapacitySettings).plan);
}

/**
 * `params` with the current step as the k6 tag `step` and the `X-Load-Step` header, which
 * is how plateau joins the client's side to the service's. Give it to every request.
 */
export function tagged(params: Params = {}): Params {
  const step = currentStep();
  return {
    ...params,
    headers: { ...(params.headers ?? {}), 'X-Load-Step': step },
    tags: { ...(params.tags ?? {}), step },
  };
}
