// k6's cookies: a jar per VU (emptied at each iteration unless options.noCookiesReset),
// `params.cookies` for one request, `params.jar` for a jar of the script's own, and
// `res.cookies`. RFC 6265 storage and matching (domains, paths, expiry, Secure, public
// suffixes) come from tough-cookie, as Go's net/http/cookiejar does it for k6.
import { Cookie, CookieJar as ToughCookieJar } from 'tough-cookie';

/** A cookie as `res.cookies` lists it (k6's HTTPCookie). */
export interface ResponseCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  http_only: boolean;
  secure: boolean;
  max_age: number;
  /** Milliseconds since the epoch; 0 when the cookie has no Expires. */
  expires: number;
}

/** `params.cookies`: a value, or `{ value, replace }` to override the jar's cookie of that name. */
export type RequestCookies = Record<string, string | { value: string; replace?: boolean }>;

/** Options of `jar.set(url, name, value, options)`, named as in k6. */
interface SetOptions {
  domain?: string;
  path?: string;
  expires?: string;
  max_age?: number;
  secure?: boolean;
  http_only?: boolean;
}

/** The `CookieJar` scripts see: `http.cookieJar()` and `new http.CookieJar()`. */
export class CookieJar {
  #jar = new ToughCookieJar();
  /** Whether anything was ever stored: a request to an empty jar costs nothing. */
  #used = false;

  /** The cookies a request to `url` would send: name → values. */
  cookiesForURL(url: string): Record<string, string[]> {
    const found: Record<string, string[]> = {};
    if (!this.#used) return found;
    for (const cookie of this.#jar.getCookiesSync(String(url))) {
      const values = found[cookie.key];
      if (values) values.push(cookie.value);
      else found[cookie.key] = [cookie.value];
    }
    return found;
  }

  /** Stores a cookie as if `url` had set it. */
  set(url: string, name: string, value: string, options: SetOptions = {}): void {
    const cookie = new Cookie({
      key: String(name),
      value: String(value),
      ...(options.domain ? { domain: options.domain } : {}),
      ...(options.path ? { path: options.path } : {}),
      ...(options.expires ? { expires: new Date(options.expires) } : {}),
      ...(options.max_age ? { maxAge: options.max_age } : {}),
      secure: options.secure === true,
      httpOnly: options.http_only === true,
    });
    this.#jar.setCookieSync(cookie, String(url));
    this.#used = true;
  }

  /** Forgets every cookie a request to `url` would send. */
  clear(url: string): void {
    this.#remove(url, undefined);
  }

  /** Forgets the cookies named `name` that a request to `url` would send. */
  delete(url: string, name: string): void {
    this.#remove(url, String(name));
  }

  /** Stores the `Set-Cookie` headers of a response from `url`; invalid ones are skipped, as Go does. */
  store(url: string, setCookies: readonly string[]): void {
    for (const header of setCookies) {
      try {
        if (this.#jar.setCookieSync(header, url, { ignoreError: true })) this.#used = true;
      } catch {
        // A cookie for another domain or a malformed header: not stored.
      }
    }
  }

  /** The jar's cookies for `url` as `name=value` pairs, leaving out `skip` (replaced) names. */
  pairsFor(url: string, skip: ReadonlySet<string>): string[] {
    if (!this.#used) return [];
    const pairs: string[] = [];
    for (const cookie of this.#jar.getCookiesSync(url)) {
      if (!skip.has(cookie.key)) pairs.push(`${cookie.key}=${cookie.value}`);
    }
    return pairs;
  }

  #remove(url: string, name: string | undefined): void {
    if (!this.#used) return;
    for (const cookie of this.#jar.getCookiesSync(String(url))) {
      if (name !== undefined && cookie.key !== name) continue;
      // MemoryCookieStore answers synchronously.
      this.#jar.store.removeCookie(cookie.domain ?? '', cookie.path ?? '/', cookie.key, () => undefined);
    }
  }
}

/**
 * The Cookie header of a request to `url`, as k6 builds it: the request's own cookies
 * first, then the jar's, except those a request cookie replaces. Undefined when there are none.
 */
export function cookieHeader(
  url: string,
  jar: CookieJar | undefined,
  requestCookies: RequestCookies | undefined,
): string | undefined {
  const pairs: string[] = [];
  const replaced = new Set<string>();
  if (requestCookies) {
    for (const name in requestCookies) {
      const cookie = requestCookies[name];
      if (cookie !== null && typeof cookie === 'object') {
        pairs.push(`${name}=${String(cookie.value)}`);
        if (cookie.replace) replaced.add(name);
      } else pairs.push(`${name}=${String(cookie)}`);
    }
  }
  if (jar) pairs.push(...jar.pairsFor(url, replaced));
  return pairs.length === 0 ? undefined : pairs.join('; ');
}

/** `res.cookies`: the response's Set-Cookie headers by name (invalid ones left out). */
export function responseCookies(setCookies: readonly string[] | undefined): Record<string, ResponseCookie[]> {
  const cookies: Record<string, ResponseCookie[]> = {};
  if (!setCookies) return cookies;
  for (const header of setCookies) {
    const cookie = Cookie.parse(header);
    if (!cookie) continue;
    const listed: ResponseCookie = {
      name: cookie.key,
      value: cookie.value,
      domain: cookie.domain ?? '',
      path: cookie.path ?? '',
      http_only: cookie.httpOnly,
      secure: cookie.secure,
      max_age: typeof cookie.maxAge === 'number' && Number.isFinite(cookie.maxAge) ? cookie.maxAge : 0,
      expires: cookie.expires instanceof Date ? cookie.expires.getTime() : 0,
    };
    const named = cookies[cookie.key];
    if (named) named.push(listed);
    else cookies[cookie.key] = [listed];
  }
  return cookies;
}
