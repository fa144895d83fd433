// Request URLs: the fast path for `http://host:port/path`, and WHATWG URL for the rest.

/** `Basic …` for the URL's user and password (percent-decoded, as Go reads them). */
export function basicAuth(url: URL): string {
  const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return `Basic ${Buffer.from(user).toString('base64')}`;
}

/** The parts of a URL a request needs. */
export interface ParsedUrl {
  origin: string;
  host: string;
  hostname: string;
  port: number;
  /** Path and query, e.g. `/statement?account=1`. */
  path: string;
  /** `Basic …` from the URL's `user:password@`, or '' (in every URL: one object shape). */
  basicAuth: string;
}

const SIMPLE_URL = /^(https?):\/\/([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?(\/[^#\s]*)?$/;
const originCache = new Map<string, string>();

/**
 * Splits a URL into origin and path. The common `http://host:port/path?query` form is
 * parsed with one regular expression (WHATWG URL objects are costly at thousands of
 * requests per second); anything else goes through `new URL`.
 */
export function parseUrl(text: string): ParsedUrl | undefined {
  const match = SIMPLE_URL.exec(text);
  if (match) {
    const [, scheme, hostname, port, path] = match as unknown as [
      string,
      string,
      string,
      string | undefined,
      string | undefined,
    ];
    const host = port ? `${hostname}:${port}` : hostname;
    const key = `${scheme}://${host}`;
    let origin = originCache.get(key);
    if (origin === undefined) {
      origin = new URL(key).origin;
      if (originCache.size < 1000) originCache.set(key, origin);
    }
    return {
      origin,
      host,
      hostname: unbracket(hostname),
      port: port ? Number(port) : scheme === 'https' ? 443 : 80,
      path: path ?? '/',
      basicAuth: '',
    };
  }
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return {
      origin: url.origin,
      host: url.host,
      hostname: unbracket(url.hostname),
      port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      path: `${url.pathname}${url.search}`,
      basicAuth: url.username !== '' || url.password !== '' ? basicAuth(url) : '',
    };
  } catch {
    return undefined;
  }
}

/** An IPv6 literal without its URL brackets (`[::1]` → `::1`); other hosts as they are. */
export function unbracket(hostname: string): string {
  return hostname.charCodeAt(0) === 91 ? hostname.slice(1, -1) : hostname;
}

/** k6 masks credentials in the `name`/`url` tags: `http://****:****@host/`. */
export function maskCredentials(url: string): string {
  if (!url.includes('@')) return url;
  return url.replace(/^(\w+:\/\/)[^/@]+@/, '$1****:****@');
}
