// What a request returns to the script: k6's Response object and the pieces of it made from
// the wire (status text, canonical header names, timings).

import { STATUS_CODES } from 'node:http';
import type { ResponseCookie } from './cookies.ts';
import { parseHTML, type Selection } from './html.ts';

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

  constructor(fields: Omit<HttpResponse, 'json' | 'html'>) {
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

  /**
   * The body parsed as HTML (k6/html's Selection of the document), or the matches of
   * `selector` in it. Throws, as k6 does, when there is no body (a failed request).
   */
  html(selector?: string): Selection {
    if (this.body === null) {
      throw new Error(
        "the body is null so we can't transform it to HTML - this likely was because of a request error getting the response",
      );
    }
    const text = typeof this.body === 'string' ? this.body : Buffer.from(this.body).toString('utf8');
    const document = parseHTML(text, this.url);
    return selector === undefined ? document : document.find(selector);
  }
}

const ZERO_TIMINGS: Timings = {
  blocked: 0,
  connecting: 0,
  tls_handshaking: 0,
  sending: 0,
  waiting: 0,
  receiving: 0,
  duration: 0,
};

const canonicalNames = new Map<string, string>();

/** Go's canonical header form: `content-type` → `Content-Type` (memoized: few distinct names). */
export function canonicalHeader(name: string): string {
  let canonical = canonicalNames.get(name);
  if (canonical === undefined) {
    canonical = name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
    if (canonicalNames.size < 1000) canonicalNames.set(name, canonical);
  }
  return canonical;
}

/** `200 OK` for each standard status, made once. */
const STANDARD_STATUS_TEXT = new Map(
  Object.entries(STATUS_CODES).map(([code, text]) => [Number(code), `${code} ${text}`]),
);

/** k6's status_text; HTTP/2 has no reason phrase, and Go's client (k6) fills in the standard one. */
export function statusText(code: number, message: string | undefined): string {
  const standard = STANDARD_STATUS_TEXT.get(code);
  if (!message || message === STATUS_CODES[code]) return standard ?? String(code);
  return `${code} ${message}`;
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

/** What an interrupted request resolves to: k6's `context canceled`, status 0, no samples. */
export function interruptedResponse(method: string, url: string): HttpResponse {
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
