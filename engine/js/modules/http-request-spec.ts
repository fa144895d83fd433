// Everything decided about a request before it is sent: k6's params read into a RequestSpec,
// the next hop of a redirect, the cookies a hop carries and the bytes it puts on the wire.

import { parseDurationNs } from '../../config/duration.ts';
import type { IterationContext } from '../context.ts';
import type { ResponseCallback, TestRuntime } from '../runtime.ts';
import { CookieJar, cookieHeader, type RequestCookies } from './cookies.ts';
import { compressBody, encodeBody } from './http-body.ts';
import { maskCredentials, type ParsedUrl, parseUrl } from './http-url.ts';

/** k6's default request timeout. */
const DEFAULT_TIMEOUT_MS = 60_000;

/** The request parameters plateau's engine understands (a subset of k6's Params). */
export interface Params {
  headers?: Record<string, unknown>;
  tags?: Record<string, unknown>;
  timeout?: string | number;
  responseType?: 'text' | 'binary' | 'none';
  responseCallback?: ResponseCallback | null;
  /** Redirects to follow for this request; overrides options.maxRedirects. */
  redirects?: number;
  /** Cookies for this request only. */
  cookies?: RequestCookies;
  /** A jar of the script's own (`new http.CookieJar()`) instead of the VU's. */
  jar?: CookieJar;
  /** k6's auth: `basic` (the URL's credentials, also the default) or `digest`. */
  auth?: string;
  /** k6's request body compression: `gzip`, `deflate`, `br`, or several, comma-separated, applied in order. */
  compression?: string;
}

/** Everything decided about a request before it is sent. */
export interface RequestSpec {
  method: string;
  urlString: string;
  url: ParsedUrl;
  /** The `name` tag (and, as in k6 since v0.41, the `url` tag too when a name is given). */
  name: string;
  /** Whether `name` came from the script (params.tags.name or http.url), not the URL. */
  named: boolean;
  customTags: Record<string, string>;
  callback: ResponseCallback | null;
  timeoutMs: number;
  responseType: 'text' | 'binary' | 'none';
  headers: Record<string, string>;
  payload: Buffer | undefined;
  body: unknown;
  /** Redirects this hop may still follow, and how many were followed before it. */
  redirectsLeft: number;
  redirectsFollowed: number;
  /** Whether the limit came from params.redirects (k6 warns only about options.maxRedirects). */
  redirectsFromParams: boolean;
  /** When the whole chain times out: k6's timeout covers all its redirects. */
  deadlineMs: number;
  /** `params.cookies`, sent again on every hop of a redirect, as k6 does. */
  requestCookies: RequestCookies | undefined;
  /** `params.jar`; undefined: the VU's jar. */
  jar: CookieJar | undefined;
}

/** Statuses Go's client follows when they carry a Location. */
export const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** The run settings a request's spec depends on. */
export type RequestDefaults = Pick<
  TestRuntime,
  'userAgent' | 'noConnectionReuse' | 'responseCallback' | 'discardResponseBodies' | 'maxRedirects'
>;

/**
 * Reads a script's request into a spec: its headers (User-Agent, basic auth from the URL,
 * Connection: close without reuse), its encoded and compressed body, its timeout, redirect
 * limit, tags and cookies. `digest` says the first request must go without credentials and
 * answer a Digest challenge. Returns an Error the script's promise rejects with for a bad URL
 * or bad params.
 */
export function buildRequestSpec(
  defaults: RequestDefaults,
  method: string,
  urlString: string,
  templateName: string | undefined,
  body: unknown,
  params: Params,
): { spec: RequestSpec; digest: boolean } | Error {
  const url = parseUrl(urlString);
  if (!url) return new Error(`invalid URL "${urlString}" in http.asyncRequest`);
  const customTags: Record<string, string> = {};
  if (params.tags) for (const key in params.tags) customTags[key] = String(params.tags[key]);
  const headers: Record<string, string> = {};
  let userAgent = defaults.userAgent !== '';
  let authorization = false;
  if (params.headers) {
    for (const key in params.headers) {
      headers[key] = String(params.headers[key]);
      if (userAgent && key.length === 10 && key.toLowerCase() === 'user-agent') userAgent = false;
      if (key.length === 13 && key.toLowerCase() === 'authorization') authorization = true;
    }
  }
  if (userAgent) headers['User-Agent'] = defaults.userAgent;
  const auth = params.auth;
  if (auth !== undefined && auth !== 'basic' && auth !== 'digest') {
    return new Error(
      `params.auth ${JSON.stringify(auth)} is not supported by the embedded engine: use basic (credentials in the URL) or digest`,
    );
  }
  const digest = auth === 'digest' && url.basicAuth !== '';
  // Credentials in the URL are HTTP basic auth, as Go's client sends them for k6
  // (http://user:pass@host/), unless the request sets its own Authorization or asks for
  // digest, whose first request goes without them.
  if (!authorization && !digest && url.basicAuth !== '') headers.Authorization = url.basicAuth;
  // Go's DisableKeepAlives, which k6's noConnectionReuse sets: every request closes its connection.
  if (defaults.noConnectionReuse) headers.Connection = 'close';
  let payload = encodeBody(body, headers);
  if (params.compression !== undefined && params.compression !== '') {
    const compressed = compressBody(payload, String(params.compression), headers);
    if (compressed instanceof Error) return compressed;
    payload = compressed;
  }
  const timeoutNs = params.timeout === undefined ? undefined : parseDurationNs(params.timeout);
  const redirects = params.redirects;
  if (redirects !== undefined && !(Number.isInteger(redirects) && redirects >= 0)) {
    return new Error(`params.redirects must be a whole number >= 0, got ${JSON.stringify(redirects)}`);
  }
  const given = customTags.name ?? templateName;
  const spec: RequestSpec = {
    method,
    urlString,
    url,
    name: given ?? maskCredentials(urlString),
    named: given !== undefined,
    customTags,
    callback: params.responseCallback === undefined ? defaults.responseCallback : params.responseCallback,
    timeoutMs: timeoutNs === undefined ? DEFAULT_TIMEOUT_MS : timeoutNs / 1e6,
    responseType: params.responseType ?? (defaults.discardResponseBodies ? 'none' : 'text'),
    headers,
    payload,
    body,
    redirectsLeft: redirects ?? defaults.maxRedirects,
    redirectsFollowed: 0,
    redirectsFromParams: redirects !== undefined,
    deadlineMs: 0,
    requestCookies: params.cookies,
    jar: params.jar instanceof CookieJar ? params.jar : undefined,
  };
  return { spec, digest: digest && !authorization };
}

/**
 * The next hop of a redirect, with Go's rules: 301/302/303 turn a request other than
 * GET/HEAD into a GET without its body, 307/308 repeat it with the body; credentials and
 * cookies are not sent to another host; Referer names the previous URL (not from https
 * to http). The name tag stays when the script gave one, else it is the new URL.
 */
export function redirectSpec(spec: RequestSpec, location: string, status: number): RequestSpec | undefined {
  let target: string;
  try {
    target = new URL(location, spec.urlString).href;
  } catch {
    return undefined;
  }
  const url = parseUrl(target);
  if (!url) return undefined;
  const keepBody = status === 307 || status === 308;
  const method = keepBody || spec.method === 'GET' || spec.method === 'HEAD' ? spec.method : 'GET';
  const headers: Record<string, string> = {};
  const sameHost = url.host === spec.url.host;
  for (const key in spec.headers) {
    const lower = key.toLowerCase();
    if (lower === 'cookie') continue; // made anew for each hop
    if (!sameHost && (lower === 'authorization' || lower === 'www-authenticate')) continue;
    if (!keepBody && (lower === 'content-type' || lower === 'content-length')) continue;
    if (lower === 'referer') continue;
    headers[key] = spec.headers[key] as string;
  }
  if (!(spec.urlString.startsWith('https:') && target.startsWith('http:'))) {
    headers.Referer = spec.urlString.replace(/^(\w+:\/\/)[^/@]+@/, '$1');
  }
  return {
    ...spec,
    method,
    urlString: target,
    url,
    name: spec.named ? spec.name : maskCredentials(target),
    headers,
    payload: keepBody ? spec.payload : undefined,
    body: keepBody ? spec.body : null,
    redirectsLeft: spec.redirectsLeft - 1,
    redirectsFollowed: spec.redirectsFollowed + 1,
  };
}

/**
 * The VU's cookie jar for the running iteration: made when first needed (`create`), and
 * emptied when a new iteration starts unless options.noCookiesReset, as in k6. Setup and
 * teardown have a VU of their own.
 */
export function vuCookieJar(
  runtime: TestRuntime,
  context: IterationContext | undefined,
  create: boolean,
): CookieJar | undefined {
  if (!context) return undefined;
  const vu = context.vu;
  if (vu.cookieJar && !runtime.noCookiesReset && vu.cookieJarIteration !== vu.iterationInInstance) {
    vu.cookieJar = undefined;
  }
  if (!vu.cookieJar && create) {
    vu.cookieJar = new CookieJar();
    vu.cookieJarIteration = vu.iterationInInstance;
  }
  return vu.cookieJar;
}

/** Adds the request's and the jar's cookies for its URL to its Cookie header, as Go's AddCookie does. */
export function addCookieHeader(spec: RequestSpec, jar: CookieJar | undefined): void {
  if (jar === undefined && spec.requestCookies === undefined) return; // the usual case: no cookies
  const cookies = cookieHeader(spec.urlString, jar, spec.requestCookies);
  if (cookies === undefined) return;
  for (const key in spec.headers) {
    if (key.toLowerCase() === 'cookie') {
      spec.headers[key] = `${spec.headers[key]}; ${cookies}`;
      return;
    }
  }
  spec.headers.Cookie = cookies;
}

/** The bytes a request puts on the wire, as data_sent counts them. */
export function requestBytes(spec: RequestSpec): number {
  const { method, url, headers, payload } = spec;
  return method.length + url.path.length + 12 + headerSize(headers, url.host) + (payload?.length ?? 0);
}

function headerSize(headers: Record<string, string>, host: string): number {
  let size = 6 + host.length + 2;
  for (const [k, v] of Object.entries(headers)) size += k.length + v.length + 4;
  return size;
}
