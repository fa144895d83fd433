// The one request every plateau script sends, tagged with its step.
import http, { type RefinedResponse } from 'k6/http';
import type { TargetSettings } from './profiles.ts';
import { formatDuration } from './settings.ts';

/** What every request of a script carries, made once in the init context. */
export interface RequestShape {
  method: string;
  /** The `name` tag: fixed, so account ids never become tag values. */
  name: string;
  headers: Record<string, string>;
  body: string | ArrayBuffer | null;
  timeout: string;
  /** The client's deadline, ms: sent as X-Request-Timeout-Ms so a service can drop dead work. */
  timeoutMs: string;
  responseCallback: ReturnType<typeof http.expectedStatuses> | undefined;
}

/**
 * The request of `settings` (method, headers, expected statuses), with `body` (read in
 * the init context with open(), which only the script itself may call).
 */
export function requestShape(settings: TargetSettings, body: string | ArrayBuffer | null): RequestShape {
  return {
    method: settings.method,
    name: `${settings.method} ${settings.endpoint}`,
    headers: settings.headers,
    body,
    timeout: formatDuration(settings.timeoutSeconds),
    timeoutMs: String(Math.round(settings.timeoutSeconds * 1000)),
    responseCallback: settings.expectStatus ? http.expectedStatuses(...settings.expectStatus) : undefined,
  };
}

/**
 * Sends the request to `url` without blocking: the step goes into the k6 tag `step` and the
 * header `X-Load-Step`, the client's deadline into `X-Request-Timeout-Ms`.
 */
export function sendTagged(
  url: string,
  step: string,
  shape: RequestShape,
  /** Further tags, e.g. `attempt` for a script that retries (keep their values few). */
  extraTags: Record<string, string> = {},
): Promise<RefinedResponse<'none'>> {
  return http.asyncRequest(shape.method, url, shape.body, {
    headers: { ...shape.headers, 'X-Load-Step': step, 'X-Request-Timeout-Ms': shape.timeoutMs },
    tags: { ...extraTags, step, name: shape.name },
    timeout: shape.timeout,
    responseType: 'none',
    ...(shape.responseCallback ? { responseCallback: shape.responseCallback } : {}),
  });
}
