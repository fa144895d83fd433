// The `k6/http` module on undici: asyncRequest with k6's tags, timings and error codes.

import { STATUS_CODES } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Dispatcher } from 'undici';
import { parseDurationNs } from '../../config/duration.ts';
import { type BuiltinMetricName, HTTP_TIMING_METRICS } from '../../metrics/builtin.ts';
import type { Metric } from '../../metrics/metric.ts';
import type { IterationContext } from '../context.ts';
import { nowMs, type ResponseCallback, type TestRuntime } from '../runtime.ts';
import {
  type ConnectionInfo,
  ConnectionPools,
  type PoolSettings,
  type TracedHandler,
} from './connection-pool.ts';
import {
  CookieJar,
  cookieHeader,
  type RequestCookies,
  type ResponseCookie,
  responseCookies,
} from './cookies.ts';
import { digestAuthorization, parseDigestChallenge } from './digest-auth.ts';
import { compressBody, decodeBody, encodeBody, FileData, NO_BODY } from './http-body.ts';
import { classify } from './http-errors.ts';
import { maskCredentials, type ParsedUrl, parseUrl } from './http-url.ts';
import { type Expiring, RequestTimeouts } from './request-timeouts.ts';

/** k6's default request timeout. */
const DEFAULT_TIMEOUT_MS = 60_000;

/** Request timings in ms, as `res.timings`. */
export interface Timings {
  blocked: number;
  connecting: number;
  tls_handshaking: number;
  sending: number;
  waiting: number;
  receiving: number;
  duration: number;
}

/** The request parameters plateau's engine understands (a subset of k6's Params). */
interface Params {
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

/** What `http.url\`…\`` returns: the URL, and a name with `${}` in place of values. */
interface TemplateUrl {
  url: string;
  name: string;
}

/** The response object scripts read (`res.status`, `res.timings.duration`, `res.json()`). */
export class HttpResponse {
  status: number;
  status_text: string;
  proto: string;
  url: string;
  headers: Record<string, string>;
  /** The response's Set-Cookie headers by cookie name. */
  cookies: Record<string, ResponseCookie[]>;
  body: string | ArrayBuffer | null;
  timings: Timings;
  error: string;
  error_code: number;
  remote_ip: string;
  remote_port: number;
  /** `tls1.3` etc. over https, '' otherwise. */
  tls_version: string;
  /** The IANA name of the TLS cipher suite (`TLS_AES_128_GCM_SHA256`), '' over plain http. */
  tls_cipher_suite: string;
  request: { method: string; url: string; headers: Record<string, string>; body: unknown };

  constructor(fields: Omit<HttpResponse, 'json'>) {
    this.status = fields.status;
    this.status_text = fields.status_text;
    this.proto = fields.proto;
    this.url = fields.url;
    this.headers = fields.headers;
    this.cookies = fields.cookies;
    this.body = fields.body;
    this.timings = fields.timings;
    this.error = fields.error;
    this.error_code = fields.error_code;
    this.remote_ip = fields.remote_ip;
    this.remote_port = fields.remote_port;
    this.tls_version = fields.tls_version;
    this.tls_cipher_suite = fields.tls_cipher_suite;
    this.request = fields.request;
  }

  /** The body parsed as JSON; `selector` is a dotted path (`a.b.0`). */
  json(selector?: string): unknown {
    if (typeof this.body !== 'string')
      throw new Error('the response has no text body to parse as JSON (responseType is not text)');
    const parsed = JSON.parse(this.body) as unknown;
    return selector ? selectPath(parsed, selector) : parsed;
  }
}

/** Everything decided about a request before it is sent. */
interface RequestSpec {
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
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

const ZERO_TIMINGS: Timings = {
  blocked: 0,
  connecting: 0,
  tls_handshaking: 0,
  sending: 0,
  waiting: 0,
  receiving: 0,
  duration: 0,
};

/**
 * One request in flight: the undici dispatch handler, its timeout, its interruption, and
 * the samples it emits when it ends. A class (not closures) because thousands are created
 * per second.
 *
 * Its timings follow k6's tracer on Go's httptrace. The moments, all from one clock:
 * created (Go's GetConn), a dial for it starting and connecting, its TLS handshake done,
 * handed to a connection (GotConn), written, first response byte, end. Then
 * blocked = handed − created (a new connection's dial included), connecting = the dial,
 * sending = written − (TLS done, dial done, or handed when the connection was reused),
 * waiting = first byte − written, receiving = end − first byte, and
 * duration = sending + waiting + receiving.
 */
/** Where requests go: the connections of the VU that sends them, and the timeouts of requests in flight. */
/**
 * Where requests go: the connections of the VU that sends them, and the timeouts of
 * requests in flight. As in k6, where every VU has its own http.Transport, a VU keeps and
 * reuses its own connections, so a server sees as many as k6 would open (about one per VU
 * in use), which matters behind a load balancer that spreads connections. Code outside any
 * VU (none in k6) shares one set. A class, not an object literal per module: its methods
 * are one function for every run, so code optimized in the warm-up rehearsal calls the
 * same function in the test.
 */
class Transport {
  readonly timeouts = new RequestTimeouts(nowMs);
  readonly #runtime: TestRuntime;
  readonly #settings: PoolSettings;
  readonly #shared: ConnectionPools;
  readonly #all: Set<ConnectionPools>;

  constructor(runtime: TestRuntime, settings: PoolSettings) {
    this.#runtime = runtime;
    this.#settings = settings;
    this.#shared = new ConnectionPools(settings);
    this.#all = new Set([this.#shared]);
  }

  agentFor(context: IterationContext | undefined): ConnectionPools {
    if (!context) return this.#shared;
    const vu = context.vu;
    let pools = vu.connections;
    if (pools && this.#runtime.noVUConnectionReuse && vu.connectionsIteration !== vu.iterationInInstance) {
      // k6 closes a VU's idle connections when its iteration ends: a new iteration dials anew.
      this.#all.delete(pools);
      void pools.close();
      pools = undefined;
    }
    if (!pools) {
      pools = new ConnectionPools(this.#settings);
      vu.connections = pools;
      vu.connectionsIteration = vu.iterationInInstance;
      this.#all.add(pools);
    }
    return pools;
  }

  /** Closes every connection this transport opened. */
  close(): Promise<void> {
    return Promise.all([...this.#all].map((pools) => pools.close())).then(() => undefined);
  }
}

class InFlightRequest implements TracedHandler, Expiring {
  // Links of the request-timeouts list this request is on (request-timeouts.ts).
  expiresAt = 0;
  timeoutPrev: Expiring | undefined = undefined;
  timeoutNext: Expiring | undefined = undefined;
  timeoutList: Expiring['timeoutList'] = undefined;

  readonly #runtime: TestRuntime;
  readonly #metrics: ReturnType<typeof requestMetrics>;
  readonly #spec: RequestSpec;
  readonly #context: IterationContext | undefined;
  readonly #resolve: (response: HttpResponse) => void;
  readonly #reject: (error: Error) => void;
  readonly #started = nowMs();
  #assigned = 0;
  #connectStart = 0;
  #connectDone = 0;
  #tlsDone = 0;
  #written = 0;
  #firstByte = 0;
  #status = 0;
  #statusText = '';
  #headers: Record<string, string> = {};
  #headerBytes = 0;
  #setCookies: string[] | undefined;
  #tlsVersion = '';
  #proto = 'HTTP/1.1';
  #remoteAddress = '';
  /** The connection's socket, for res.remote_ip/remote_port (Node caches its peer address). */
  #socket: ConnectionInfo['socket'] | undefined = undefined;
  #chunks: Buffer[] = [];
  #bodyBytes = 0;
  #settled = false;
  #timedOut = false;
  #controller: Dispatcher.DispatchController | undefined;
  #timer: NodeJS.Timeout | undefined;
  #unlisten: () => unknown = noop;
  #transport: Transport | undefined;

  constructor(
    runtime: TestRuntime,
    metrics: ReturnType<typeof requestMetrics>,
    spec: RequestSpec,
    context: IterationContext | undefined,
    resolve: (r: HttpResponse) => void,
    reject: (error: Error) => void,
  ) {
    this.#runtime = runtime;
    this.#metrics = metrics;
    this.#spec = spec;
    this.#context = context;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  start(transport: Transport): void {
    this.#transport = transport;
    const { timeouts } = transport;
    const agent = transport.agentFor(this.#context);
    // A redirect hop has what is left of its chain's timeout: a timer of its own.
    if (this.#spec.redirectsFollowed === 0) timeouts.start(this, this.#spec.timeoutMs);
    else this.#timer = setTimeout(timeOut, Math.max(1, this.#spec.deadlineMs - this.#started), this);
    if (this.#context) this.#unlisten = this.#context.interrupt.onAbort(() => this.interrupt());
    const { url, method, headers, payload } = this.#spec;
    agent.dispatch(
      {
        origin: url.origin,
        path: url.path,
        method: method as Dispatcher.HttpMethod,
        headers,
        body: payload ?? null,
      },
      this,
    );
  }

  onConnectStart(): void {
    if (this.#connectStart === 0) this.#connectStart = nowMs();
  }

  onConnectDone(): void {
    if (this.#connectDone === 0) this.#connectDone = nowMs();
  }

  onTlsHandshakeDone(): void {
    if (this.#tlsDone === 0) this.#tlsDone = nowMs();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    this.#assigned = nowMs();
    // Given another connection while its own dial is still going: as in k6, the dial
    // counts as done now.
    if (this.#connectStart !== 0 && this.#connectDone === 0) this.#connectDone = this.#assigned;
    if (this.#settled) controller.abort(new Error('request already finished'));
  }

  onConnection(info: ConnectionInfo): void {
    this.#tlsVersion = info.tlsVersion;
    this.#proto = info.proto;
    this.#socket = info.socket;
    // getpeername is a system call: only when the ip tag is wanted.
    if (this.#runtime.systemTags.ip) this.#remoteAddress = info.socket.remoteAddress ?? '';
  }

  onRequestWritten(): void {
    if (this.#written === 0) this.#written = nowMs();
  }

  onResponseStart(
    _c: Dispatcher.DispatchController,
    statusCode: number,
    rawHeaders: Record<string, string | string[] | undefined>,
    message?: string,
  ): void {
    this.#firstByte = nowMs();
    this.#status = statusCode;
    this.#statusText = statusText(statusCode, message);
    const canonical: Record<string, string> = {};
    let bytes = 17 + this.#statusText.length;
    for (const key in rawHeaders) {
      const value = rawHeaders[key];
      const text = Array.isArray(value) ? value.join(', ') : String(value);
      if (key === 'set-cookie') this.#setCookies = Array.isArray(value) ? value : [text];
      canonical[canonicalHeader(key)] = text;
      bytes += key.length + text.length + 4;
    }
    this.#headers = canonical;
    this.#headerBytes = bytes;
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#bodyBytes += chunk.length;
    if (this.#spec.responseType !== 'none') this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.#finish(undefined);
  }

  onResponseError(_c: Dispatcher.DispatchController, error: Error): void {
    this.#finish(error);
  }

  expire(): void {
    this.timeOut();
  }

  /** The request's timeout fired: k6 reports status 0, error_code 1050. */
  timeOut(): void {
    this.#timedOut = true;
    this.#finish(new Error('request timeout'));
    this.#controller?.abort(new Error('request timeout'));
  }

  /** The iteration was interrupted: abandon the request without recording it. */
  interrupt(): void {
    if (this.#settled) return;
    // Settle first: abort() calls onResponseError synchronously, which must not record.
    this.#settled = true;
    this.#transport?.timeouts.cancel(this);
    clearTimeout(this.#timer);
    this.#controller?.abort(new Error('interrupted'));
    this.#resolve(interruptedResponse(this.#spec.method, this.#spec.urlString));
  }

  /**
   * Follows a redirect as Go's client does for k6: each hop is a request of its own with
   * its own samples, the response is the last hop's. Returns false when this response is
   * the one to return (no Location, an unusable one, or no redirects left).
   */
  #redirect(location: string | undefined): boolean {
    const spec = this.#spec;
    if (location === undefined || this.#context?.interrupted) return false;
    if (spec.redirectsLeft <= 0) {
      if (!spec.redirectsFromParams) {
        this.#runtime.logger.log(
          'warning',
          `Stopped after ${spec.redirectsFollowed + 1} redirects and returned the redirection; pass { redirects: n } in request params or set global maxRedirects to silence this`,
          { url: spec.urlString },
        );
      }
      return false;
    }
    const next = redirectSpec(spec, location, this.#status);
    if (!next) return false;
    // As k6 does on every hop: the Cookie header anew from the jar and the request's cookies.
    addCookieHeader(next, next.jar ?? vuCookieJar(this.#runtime, this.#context, false));
    if (this.#context) this.#context.bytesSent += requestBytes(next);
    new InFlightRequest(this.#runtime, this.#metrics, next, this.#context, this.#resolve, this.#reject).start(
      this.#transport as Transport,
    );
    return true;
  }

  /** The request's timings at `ended` (see the class comment). */
  /** The response's status line and headers, as --http-debug prints them. */
  #responseHead(status: number): string {
    const lines = [`${this.#proto} ${this.#statusText || status}`];
    for (const [name, value] of Object.entries(this.#headers)) lines.push(`${name}: ${value}`);
    return lines.join('\n');
  }

  #timings(ended: number): Timings {
    const connected = this.#tlsDone || this.#connectDone || this.#assigned;
    // As in k6, a request that failed before its first response byte has no waiting time:
    // a timeout's duration is its sending alone.
    const sending = span(connected, this.#written);
    const waiting = span(this.#written, this.#firstByte);
    const receiving = span(this.#firstByte, ended);
    return {
      blocked: span(this.#started, this.#assigned),
      connecting: span(this.#connectStart, this.#connectDone),
      tls_handshaking: span(this.#connectDone, this.#tlsDone),
      sending,
      waiting,
      receiving,
      duration: sending + waiting + receiving,
    };
  }

  #finish(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#transport?.timeouts.cancel(this);
    clearTimeout(this.#timer);
    this.#unlisten();
    const runtime = this.#runtime;
    const spec = this.#spec;
    const context = this.#context;
    const failed = error !== undefined;
    // Read as k6 reads it: through the decompressor its Content-Encoding names, inside
    // the receiving time; a body that does not decompress is error 1701.
    const decoded = failed ? NO_BODY : decodeBody(this.#chunks, spec.responseType, this.#headers);
    const ended = nowMs();
    const status = failed ? 0 : this.#status;
    const [errorCode, errorText] = failed
      ? classify(error, this.#timedOut)
      : decoded.error !== undefined
        ? [1701, decoded.error]
        : status >= 400
          ? [1000 + status, '']
          : [0, ''];
    const timings = this.#timings(ended);
    if (context) context.bytesReceived += this.#headerBytes + this.#bodyBytes;
    const expected = spec.callback ? !failed && spec.callback(status) : undefined;
    if (!context?.interrupted) {
      const tags = runtime.contextTags(context);
      Object.assign(tags, spec.customTags);
      const on = runtime.systemTags;
      if (on.method) tags.method = spec.method;
      if (on.url) tags.url = spec.name;
      if (on.name) tags.name = spec.name;
      if (on.status) tags.status = String(status);
      if (on.proto) tags.proto = failed ? '' : this.#proto;
      if (on.tls_version && this.#tlsVersion !== '') tags.tls_version = this.#tlsVersion;
      if (on.expected_response && expected !== undefined) tags.expected_response = String(expected);
      if (on.error_code && errorCode !== 0) tags.error_code = String(errorCode);
      if (on.error && errorText !== '') tags.error = errorText;
      if (on.ip && this.#remoteAddress !== '') tags.ip = this.#remoteAddress;
      emitRequest(runtime, this.#metrics, tags, timings, expected, ended, runtime.sampleMetadata(context));
    }
    if (runtime.httpDebug !== '' && !context?.interrupted) {
      logHttpDebug(runtime, context, spec, failed ? undefined : this.#responseHead(status), decoded.body);
    }
    // k6: with options.throw a failed request (network, timeout, TLS, a body that does not
    // decompress) throws in the script; without it, it warns and returns the response.
    if ((failed || decoded.error !== undefined) && runtime.throwOnRequestError) {
      this.#reject(new Error(`${spec.method} ${spec.urlString}: ${errorText} (error_code ${errorCode})`));
      return;
    }
    if (failed) runtime.logger.log('warning', 'Request Failed', { error: JSON.stringify(errorText) });
    if (this.#setCookies && !context?.interrupted) {
      (spec.jar ?? vuCookieJar(runtime, context, true))?.store(spec.urlString, this.#setCookies);
    }
    if (!failed && REDIRECT_STATUSES.has(status) && this.#redirect(this.#headers.Location)) return;
    this.#resolve(
      new HttpResponse({
        status,
        status_text: failed ? '' : this.#statusText,
        proto: failed ? '' : this.#proto,
        url: spec.urlString,
        headers: this.#headers,
        cookies: responseCookies(this.#setCookies),
        body: decoded.body,
        timings,
        error: errorText,
        error_code: errorCode,
        remote_ip: this.#socket?.remoteAddress ?? spec.url.hostname,
        remote_port: this.#socket?.remotePort ?? spec.url.port,
        tls_version: this.#tlsVersion,
        tls_cipher_suite:
          this.#tlsVersion === ''
            ? ''
            : ((this.#socket as TLSSocket | undefined)?.getCipher?.()?.standardName ?? ''),
        request: { method: spec.method, url: spec.urlString, headers: spec.headers, body: spec.body ?? null },
      }),
    );
  }
}

function noop(): void {}

/**
 * k6's --http-debug: the request and the response as they went over the wire, logged at info
 * with `source=http-debug`; bodies only with --http-debug=full (binary ones as a byte count).
 */
function logHttpDebug(
  runtime: TestRuntime,
  context: IterationContext | undefined,
  spec: RequestSpec,
  responseHead: string | undefined,
  body: unknown,
): void {
  const full = runtime.httpDebug === 'full';
  const requestLines = [`${spec.method} ${spec.url.path} HTTP/1.1`, `Host: ${spec.url.host}`];
  for (const [name, value] of Object.entries(spec.headers)) requestLines.push(`${name}: ${value}`);
  let text = `Request:\n${requestLines.join('\n')}\n\n`;
  if (full && spec.payload) text += `${spec.payload.toString('utf8')}\n`;
  if (responseHead !== undefined) {
    text += `Response:\n${responseHead}\n\n`;
    if (full && body !== null && body !== undefined) {
      text +=
        typeof body === 'string'
          ? `${body}\n`
          : `[${(body as ArrayBuffer).byteLength} bytes of binary body]\n`;
    }
  }
  const fields: Record<string, string> = { source: 'http-debug' };
  if (context) {
    fields.vu = String(context.vu.idInInstance);
    fields.iter = String(context.vuIterationInInstance);
    if (context.scenario) fields.scenario = context.scenario.name;
  }
  runtime.logger.log('info', text, fields);
}

/**
 * The next hop of a redirect, with Go's rules: 301/302/303 turn a request other than
 * GET/HEAD into a GET without its body, 307/308 repeat it with the body; credentials and
 * cookies are not sent to another host; Referer names the previous URL (not from https
 * to http). The name tag stays when the script gave one, else it is the new URL.
 */
function redirectSpec(spec: RequestSpec, location: string, status: number): RequestSpec | undefined {
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
function vuCookieJar(
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
function addCookieHeader(spec: RequestSpec, jar: CookieJar | undefined): void {
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
function requestBytes(spec: RequestSpec): number {
  const { method, url, headers, payload } = spec;
  return method.length + url.path.length + 12 + headerSize(headers, url.host) + (payload?.length ?? 0);
}

/** `to − from` when both moments happened, else 0. */
function span(from: number, to: number): number {
  return from === 0 || to === 0 || to < from ? 0 : to - from;
}

function timeOut(request: InFlightRequest): void {
  request.timeOut();
}

/** k6's per-request metrics, in k6's order; http_req_failed only with a response callback. */
const REQUEST_METRICS = [
  'http_reqs',
  ...HTTP_TIMING_METRICS,
  'http_req_failed',
] as const satisfies readonly BuiltinMetricName[];

/** The metric lists of a request's sample container, with and without http_req_failed. */
function requestMetrics(runtime: TestRuntime): { withFailed: Metric[]; withoutFailed: Metric[] } {
  const withFailed = REQUEST_METRICS.map((name) => runtime.registry.builtin(name));
  return { withFailed, withoutFailed: withFailed.slice(0, -1) };
}

/** Emits k6's samples of one request as one container sharing `tags` and the end time. */
function emitRequest(
  runtime: TestRuntime,
  metrics: { withFailed: Metric[]; withoutFailed: Metric[] },
  tags: Record<string, string>,
  t: Timings,
  expected: boolean | undefined,
  timeMs: number,
  metadata: Record<string, string> | undefined,
) {
  const values = [
    1,
    t.duration,
    t.blocked,
    t.connecting,
    t.tls_handshaking,
    t.sending,
    t.waiting,
    t.receiving,
  ];
  if (expected !== undefined) values.push(expected ? 0 : 1);
  const requestMetrics = expected === undefined ? metrics.withoutFailed : metrics.withFailed;
  runtime.emitContainer(
    metadata
      ? { timeMs, tags, metrics: requestMetrics, values, metadata }
      : { timeMs, tags, metrics: requestMetrics, values },
  );
}

const canonicalNames = new Map<string, string>();

/** Go's canonical header form: `content-type` → `Content-Type` (memoized: few distinct names). */
function canonicalHeader(name: string): string {
  let canonical = canonicalNames.get(name);
  if (canonical === undefined) {
    canonical = name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
    if (canonicalNames.size < 1000) canonicalNames.set(name, canonical);
  }
  return canonical;
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
    const url = parseUrl(urlString);
    if (!url) return Promise.reject(new Error(`invalid URL "${urlString}" in http.asyncRequest`));
    if (context?.interrupt.aborted) return Promise.reject(new Error('the iteration was interrupted'));
    const customTags: Record<string, string> = {};
    if (params.tags) for (const key in params.tags) customTags[key] = String(params.tags[key]);
    const headers: Record<string, string> = {};
    let userAgent = runtime.userAgent !== '';
    let authorization = false;
    if (params.headers) {
      for (const key in params.headers) {
        headers[key] = String(params.headers[key]);
        if (userAgent && key.length === 10 && key.toLowerCase() === 'user-agent') userAgent = false;
        if (key.length === 13 && key.toLowerCase() === 'authorization') authorization = true;
      }
    }
    if (userAgent) headers['User-Agent'] = runtime.userAgent;
    const auth = params.auth;
    if (auth !== undefined && auth !== 'basic' && auth !== 'digest') {
      return Promise.reject(
        new Error(
          `params.auth ${JSON.stringify(auth)} is not supported by the embedded engine: use basic (credentials in the URL) or digest`,
        ),
      );
    }
    const digest = auth === 'digest' && url.basicAuth !== '';
    // Credentials in the URL are HTTP basic auth, as Go's client sends them for k6
    // (http://user:pass@host/), unless the request sets its own Authorization or asks for
    // digest, whose first request goes without them.
    if (!authorization && !digest && url.basicAuth !== '') headers.Authorization = url.basicAuth;
    // Go's DisableKeepAlives, which k6's noConnectionReuse sets: every request closes its connection.
    if (runtime.noConnectionReuse) headers.Connection = 'close';
    let payload = encodeBody(body, headers);
    if (params.compression !== undefined && params.compression !== '') {
      const compressed = compressBody(payload, String(params.compression), headers);
      if (compressed instanceof Error) return Promise.reject(compressed);
      payload = compressed;
    }
    const timeoutNs = params.timeout === undefined ? undefined : parseDurationNs(params.timeout);
    const redirects = params.redirects;
    if (redirects !== undefined && !(Number.isInteger(redirects) && redirects >= 0)) {
      return Promise.reject(
        new Error(`params.redirects must be a whole number >= 0, got ${JSON.stringify(redirects)}`),
      );
    }
    const given = customTags.name ?? templateName;
    const spec: RequestSpec = {
      method,
      urlString,
      url,
      name: given ?? maskCredentials(urlString),
      named: given !== undefined,
      customTags,
      callback: params.responseCallback === undefined ? runtime.responseCallback : params.responseCallback,
      timeoutMs: timeoutNs === undefined ? DEFAULT_TIMEOUT_MS : timeoutNs / 1e6,
      responseType: params.responseType ?? (runtime.discardResponseBodies ? 'none' : 'text'),
      headers,
      payload,
      body,
      redirectsLeft: redirects ?? runtime.maxRedirects,
      redirectsFollowed: 0,
      redirectsFromParams: redirects !== undefined,
      deadlineMs: 0,
      requestCookies: params.cookies,
      jar: params.jar instanceof CookieJar ? params.jar : undefined,
    };
    if (digest && !authorization) return digestExchange(context, spec);
    return whenTurn(context, spec);
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

  const blocking = (name: string) => () => {
    throw new Error(
      `http.${name}() blocks the VU, which plateau's embedded engine cannot do. ` +
        `Use the async form: await http.asyncRequest('${name === 'request' ? 'GET' : name.toUpperCase()}', url, body, params)`,
    );
  };

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
    request: blocking('request'),
    get: blocking('get'),
    head: blocking('head'),
    post: blocking('post'),
    put: blocking('put'),
    patch: blocking('patch'),
    del: blocking('del'),
    options: blocking('options'),
    batch: blocking('batch'),
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

/** `200 OK` for each standard status, made once. */
const STANDARD_STATUS_TEXT = new Map(
  Object.entries(STATUS_CODES).map(([code, text]) => [Number(code), `${code} ${text}`]),
);

/** k6's status_text; HTTP/2 has no reason phrase, and Go's client (k6) fills in the standard one. */
function statusText(code: number, message: string | undefined): string {
  const standard = STANDARD_STATUS_TEXT.get(code);
  if (!message || message === STATUS_CODES[code]) return standard ?? String(code);
  return `${code} ${message}`;
}

function headerSize(headers: Record<string, string>, host: string): number {
  let size = 6 + host.length + 2;
  for (const [k, v] of Object.entries(headers)) size += k.length + v.length + 4;
  return size;
}

/** `res.json('a.b.0')`: a dotted path into the parsed body. */
function selectPath(value: unknown, path: string): unknown {
  let current: unknown = value;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function interruptedResponse(method: string, url: string): HttpResponse {
  return new HttpResponse({
    status: 0,
    status_text: '',
    proto: '',
    url,
    headers: {},
    cookies: {},
    body: null,
    timings: { ...ZERO_TIMINGS },
    error: 'context canceled',
    error_code: 1000,
    remote_ip: '',
    remote_port: 0,
    tls_version: '',
    tls_cipher_suite: '',
    request: { method, url, headers: {}, body: null },
  });
}
