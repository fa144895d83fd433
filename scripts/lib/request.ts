// The one request every plateau script sends, tagged with its step.
import http, { type RefinedResponse } from 'k6/http';
import { formatDuration } from './settings.ts';

/**
 * Sends `GET url` without blocking: the step goes into the k6 tag `step` and the header
 * `X-Load-Step`, and the `name` tag is fixed so account ids never become tag values.
 */
export function sendTagged(
  url: string,
  step: string,
  name: string,
  timeoutSeconds: number,
): Promise<RefinedResponse<'none'>> {
  return http.asyncRequest('GET', url, null, {
    headers: { 'X-Load-Step': step },
    tags: { step, name },
    timeout: formatDuration(timeoutSeconds),
    responseType: 'none',
  });
}
