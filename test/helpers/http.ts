// A small HTTP client for tests (undici), decoding gzip bodies.
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body, gunzipped when Content-Encoding is gzip. */
  text: string;
  /** The body as sent on the wire. */
  raw: Buffer;
}

/** GET (or `method`) `url` with optional headers; never throws on HTTP status. */
export async function fetchText(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<TestResponse> {
  const res = await request(url, {
    method: method as 'GET',
    headers,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const raw = Buffer.from(await res.body.arrayBuffer());
  const gzip = res.headers['content-encoding'] === 'gzip';
  return {
    status: res.statusCode,
    headers: res.headers,
    raw,
    text: (gzip ? gunzipSync(raw) : raw).toString('utf8'),
  };
}
