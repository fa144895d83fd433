// One request in flight on undici: its dispatch handler, timeout, interruption, redirects,
// and the samples and response it ends with.

import type { TLSSocket } from 'node:tls';
import type { Dispatcher } from 'undici';
import { type BuiltinMetricName, HTTP_TIMING_METRICS } from '../../metrics/builtin.ts';
import type { Metric } from '../../metrics/metric.ts';
import type { IterationContext } from '../context.ts';
import { nowMs, type TestRuntime } from '../runtime.ts';
import type { ConnectionInfo, TracedHandler } from './connection-pool.ts';
import { responseCookies } from './cookies.ts';
import { decodeBody, NO_BODY } from './http-body.ts';
import { logHttpDebug } from './http-debug.ts';
import { classify } from './http-errors.ts';
import {
  addCookieHeader,
  REDIRECT_STATUSES,
  type RequestSpec,
  redirectSpec,
  requestBytes,
  vuCookieJar,
} from './http-request-spec.ts';
import {
  canonicalHeader,
  HttpResponse,
  interruptedResponse,
  statusText,
  type Timings,
} from './http-response.ts';
import { RequestMoments } from './http-timings.ts';
import type { Transport } from './http-transport.ts';
import type { Expiring } from './request-timeouts.ts';

/**
 * One request in flight: the undici dispatch handler, its timeout, its interruption, and
 * the samples it emits when it ends. A class (not closures) because thousands are created
 * per second. Its timings are k6's, from the moments it records (http-timings.ts).
 */
export class InFlightRequest implements TracedHandler, Expiring {
  // Links of the request-timeouts list this request is on (request-timeouts.ts).
  expiresAt = 0;
  timeoutPrev: Expiring | undefined = undefined;
  timeoutNext: Expiring | undefined = undefined;
  timeoutList: Expiring['timeoutList'] = undefined;

  readonly #runtime: TestRuntime;
  readonly #metrics: RequestMetrics;
  readonly #spec: RequestSpec;
  readonly #context: IterationContext | undefined;
  readonly #resolve: (response: HttpResponse) => void;
  readonly #reject: (error: Error) => void;
  readonly #moments = new RequestMoments(nowMs());
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
    metrics: RequestMetrics,
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
    else this.#timer = setTimeout(timeOut, Math.max(1, this.#spec.deadlineMs - this.#moments.created), this);
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
    if (this.#moments.connectStart === 0) this.#moments.connectStart = nowMs();
  }

  onConnectDone(): void {
    if (this.#moments.connectDone === 0) this.#moments.connectDone = nowMs();
  }

  onTlsHandshakeDone(): void {
    if (this.#moments.tlsDone === 0) this.#moments.tlsDone = nowMs();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    this.#moments.assigned = nowMs();
    // Given another connection while its own dial is still going: as in k6, the dial
    // counts as done now.
    if (this.#moments.connectStart !== 0 && this.#moments.connectDone === 0)
      this.#moments.connectDone = this.#moments.assigned;
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
    if (this.#moments.written === 0) this.#moments.written = nowMs();
  }

  onResponseStart(
    _c: Dispatcher.DispatchController,
    statusCode: number,
    rawHeaders: Record<string, string | string[] | undefined>,
    message?: string,
  ): void {
    this.#moments.firstByte = nowMs();
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

  /** The response's status line and headers, as --http-debug prints them. */
  #responseHead(status: number): string {
    const lines = [`${this.#proto} ${this.#statusText || status}`];
    for (const [name, value] of Object.entries(this.#headers)) lines.push(`${name}: ${value}`);
    return lines.join('\n');
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
    const timings = this.#moments.timings(ended);
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
export interface RequestMetrics {
  withFailed: Metric[];
  withoutFailed: Metric[];
}

export function requestMetrics(runtime: TestRuntime): RequestMetrics {
  const withFailed = REQUEST_METRICS.map((name) => runtime.registry.builtin(name));
  return { withFailed, withoutFailed: withFailed.slice(0, -1) };
}

/** Emits k6's samples of one request as one container sharing `tags` and the end time. */
function emitRequest(
  runtime: TestRuntime,
  metrics: RequestMetrics,
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
