// The `k6/http` module on undici: asyncRequest with k6's tags, timings and error codes.

import type { IterationContext } from '../context.ts';
import { nowMs, type ResponseCallback, type TestRuntime } from '../runtime.ts';
import { CookieJar } from './cookies.ts';
import { digestAuthorization, parseDigestChallenge } from './digest-auth.ts';
import { FileData } from './http-body.ts';
import { InFlightRequest, requestMetrics } from './http-in-flight-request.ts';
import {
  addCookieHeader,
  buildRequestSpec,
  type Params,
  type RequestSpec,
  requestBytes,
  vuCookieJar,
} from './http-request-spec.ts';
import type { HttpResponse } from './http-response.ts';
import { Transport } from './http-transport.ts';

/** What `http.url\`…\`` returns: the URL, and a name with `${}` in place of values. */
interface TemplateUrl {
  url: string;
  name: string;
}

/** Builds a response callback from status codes and `{min, max}` ranges. */
export function expectedStatuses(...specs: (number | { min: number; max: number })[]): ResponseCallback {
  const singles = new Set<number>();
  const ranges: { min: number; max: number }[] = [];
  for (const spec of specs) {
    if (typeof spec === 'number' && Number.isInteger(spec)) singles.add(spec);
    else if (spec && typeof spec === 'object' && Number.isInteger(spec.min) && Number.isInteger(spec.max))
      ranges.push(spec);
    else throw new Error(`expectedStatuses: ${JSON.stringify(spec)} is neither a status code nor {min, max}`);
  }
  return (status) => singles.has(status) || ranges.some((r) => status >= r.min && status <= r.max);
}

/**
 * Builds `k6/http` for a run. Requests go through keep-alive connections handed out as Go
 * does (connection-pool.ts), with no connection cap: each VU has at most one request in
 * flight, so maxVUs bounds the sockets.
 * The synchronous functions throw: a Node engine cannot block a VU, so scripts must await
 * asyncRequest.
 */
export function createHttpModule(runtime: TestRuntime) {
  const settings = {
    keepAliveTimeoutMs: 60_000,
    insecureSkipTLSVerify: () => runtime.insecureSkipTLSVerify,
    hosts: () => runtime.hosts,
    tls: () => runtime.tls,
    destinations: () => runtime.destinations,
  };
  const transport = new Transport(runtime, settings);
  const metrics = requestMetrics(runtime);

  function asyncRequest(
    method: string,
    target: string | TemplateUrl,
    body?: unknown,
    params: Params = {},
  ): Promise<HttpResponse> {
    const context = runtime.current();
    const urlString = typeof target === 'string' ? target : String(target?.url);
    const templateName = typeof target === 'object' && target !== null ? target.name : undefined;
    return send(context, String(method).toUpperCase(), urlString, templateName, body, params ?? {});
  }

  function send(
    context: IterationContext | undefined,
    method: string,
    urlString: string,
    templateName: string | undefined,
    body: unknown,
    params: Params,
  ): Promise<HttpResponse> {
    if (context?.interrupt.aborted) return Promise.reject(new Error('the iteration was interrupted'));
    const built = buildRequestSpec(runtime, method, urlString, templateName, body, params);
    if (built instanceof Error) return Promise.reject(built);
    if (built.digest) return digestExchange(context, built.spec);
    return whenTurn(context, built.spec);
  }

  /** Sends `spec` once its options.rps turn has come (at once without a limit). */
  function whenTurn(context: IterationContext | undefined, spec: RequestSpec): Promise<HttpResponse> {
    const rpsWaitMs = runtime.rpsWaitMs();
    if (rpsWaitMs > 0) {
      // options.rps: the request waits for its turn first; its timeout starts after, as in k6.
      // An interrupt (the scenario's end, a stop) ends the wait, as it cancels k6's limiter wait.
      return new Promise<HttpResponse>((resolve, reject) => {
        let unlisten: () => unknown = noop;
        const timer = setTimeout(() => {
          unlisten();
          resolve(dispatchRequest(context, spec));
        }, rpsWaitMs);
        if (context) {
          unlisten = context.interrupt.onAbort(() => {
            clearTimeout(timer);
            reject(new Error('the iteration was interrupted'));
          });
        }
      });
    }
    return dispatchRequest(context, spec);
  }

  /**
   * k6's digest auth: the request goes without credentials, its 401 counted as expected (k6
   * does the same); a Digest challenge is answered once with the URL's credentials, and
   * that second response is the script's. Both requests are samples, as both are in k6.
   */
  function digestExchange(context: IterationContext | undefined, spec: RequestSpec): Promise<HttpResponse> {
    const callback = spec.callback;
    const first: RequestSpec = {
      ...spec,
      callback: callback ? (status: number) => status === 401 || callback(status) : null,
    };
    return whenTurn(context, first).then((response) => {
      const challenge = parseDigestChallenge(response.headers['Www-Authenticate']);
      if (response.status !== 401 || !challenge || context?.interrupt.aborted) return response;
      const credentials = Buffer.from(spec.url.basicAuth.slice('Basic '.length), 'base64').toString();
      const colon = credentials.indexOf(':');
      const authorization = digestAuthorization(
        challenge,
        spec.method,
        spec.url.path,
        credentials.slice(0, colon),
        credentials.slice(colon + 1),
      );
      if (!authorization) return response;
      // The answer is part of the same request for options.rps, as in k6: no second turn.
      return dispatchRequest(context, {
        ...spec,
        headers: { ...spec.headers, Authorization: authorization },
      });
    });
  }

  function dispatchRequest(context: IterationContext | undefined, spec: RequestSpec): Promise<HttpResponse> {
    spec.deadlineMs = nowMs() + spec.timeoutMs;
    addCookieHeader(spec, spec.jar ?? vuCookieJar(runtime, context, false));
    // Counted when sent, so an interrupted request's bytes still show in data_sent.
    if (context) context.bytesSent += requestBytes(spec);
    return new Promise<HttpResponse>((resolve, reject) =>
      new InFlightRequest(runtime, metrics, spec, context, resolve, reject).start(transport),
    );
  }

  // k6's blocking forms. They return a promise: the loader rewrites every call of them in
  // a script to be awaited (engine/js/blocking-calls.ts), so a VU waits, as in k6.
  const request = (method: string, target: string | TemplateUrl, body?: unknown, params?: Params) =>
    asyncRequest(method, target, body, params);
  const withoutBody =
    (method: string) =>
    (target: string | TemplateUrl, params?: Params): Promise<HttpResponse> =>
      asyncRequest(method, target, null, params);
  const withBody =
    (method: string) =>
    (target: string | TemplateUrl, body?: unknown, params?: Params): Promise<HttpResponse> =>
      asyncRequest(method, target, body, params);

  /** k6's http.batch: the requests in parallel; responses in the shape of `requests`. */
  function batch(requests: unknown): Promise<unknown> {
    const one = (item: unknown): Promise<HttpResponse> => {
      if (
        typeof item === 'string' ||
        (item && typeof item === 'object' && 'name' in item && 'url' in item && !('method' in item))
      ) {
        return asyncRequest('GET', item as string | TemplateUrl);
      }
      if (Array.isArray(item)) {
        const [method, target, body, params] = item as [string, string, unknown, Params | undefined];
        return asyncRequest(method, target, body ?? null, params);
      }
      if (item && typeof item === 'object') {
        const {
          method = 'GET',
          url: target,
          body = null,
          params,
        } = item as {
          method?: string;
          url: string;
          body?: unknown;
          params?: Params;
        };
        return asyncRequest(method, target, body, params);
      }
      return Promise.reject(
        new Error(
          `http.batch: ${JSON.stringify(item)} is not a request (a URL, [method, url, body, params] or { method, url, body, params })`,
        ),
      );
    };
    if (Array.isArray(requests)) return Promise.all(requests.map(one));
    if (requests && typeof requests === 'object') {
      const entries = Object.entries(requests as Record<string, unknown>);
      return Promise.all(entries.map(([, item]) => one(item))).then((responses) =>
        Object.fromEntries(entries.map(([key], i) => [key, responses[i]])),
      );
    }
    return Promise.reject(new Error('http.batch takes an array or an object of requests'));
  }

  function url(strings: TemplateStringsArray, ...values: unknown[]): TemplateUrl {
    let full = strings[0] ?? '';
    let name = strings[0] ?? '';
    values.forEach((value, i) => {
      full += String(value) + (strings[i + 1] ?? '');
      name += `\${}${strings[i + 1] ?? ''}`;
    });
    return { url: full, name };
  }

  const exports = {
    asyncRequest,
    request,
    get: withoutBody('GET'),
    head: withoutBody('HEAD'),
    post: withBody('POST'),
    put: withBody('PUT'),
    patch: withBody('PATCH'),
    del: withBody('DELETE'),
    options: withBody('OPTIONS'),
    batch,
    expectedStatuses,
    setResponseCallback(callback: ResponseCallback | null) {
      runtime.responseCallback = callback;
    },
    url,
    /** k6's `http.file(data, [filename], [contentType])`: a file part for a multipart body. */
    file(data: unknown, filename?: string, contentType?: string): FileData {
      return new FileData(data, filename, contentType);
    },
    TLS_1_0: 'tls1.0',
    TLS_1_1: 'tls1.1',
    TLS_1_2: 'tls1.2',
    TLS_1_3: 'tls1.3',
    /** The running VU's cookie jar (emptied at each iteration unless options.noCookiesReset). */
    cookieJar(): CookieJar {
      const jar = vuCookieJar(runtime, runtime.current(), true);
      if (!jar)
        throw new Error(
          'http.cookieJar() needs a VU: call it in setup(), an iteration or teardown(), not in the init context',
        );
      return jar;
    },
    CookieJar,
  };
  return {
    module: { default: exports, ...exports },
    close: () => {
      transport.timeouts.clear();
      return transport.close();
    },
  };
}

function noop(): void {}
