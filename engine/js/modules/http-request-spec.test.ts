import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CookieJar } from './cookies.ts';
import {
  addCookieHeader,
  buildRequestSpec,
  type Params,
  type RequestDefaults,
  type RequestSpec,
  redirectSpec,
  requestBytes,
} from './http-request-spec.ts';

const DEFAULTS: RequestDefaults = {
  userAgent: 'k6/0.49.0 (https://k6.io/)',
  noConnectionReuse: false,
  responseCallback: null,
  discardResponseBodies: false,
  maxRedirects: 10,
};

function spec(
  url: string,
  params: Params = {},
  method = 'GET',
  body?: unknown,
  defaults = DEFAULTS,
): RequestSpec {
  const built = buildRequestSpec(defaults, method, url, undefined, body, params);
  if (built instanceof Error) throw built;
  return built.spec;
}

test('a plain GET gets the User-Agent, the URL as its name, and k6 defaults', () => {
  const s = spec('http://127.0.0.1:8080/statement?account=1');
  assert.deepEqual(s.headers, { 'User-Agent': DEFAULTS.userAgent });
  assert.equal(s.name, 'http://127.0.0.1:8080/statement?account=1');
  assert.equal(s.named, false);
  assert.equal(s.timeoutMs, 60_000);
  assert.equal(s.redirectsLeft, 10);
  assert.equal(s.responseType, 'text');
  assert.equal(s.payload, undefined);
});

test("the script's headers, tags, timeout and redirects override the defaults", () => {
  const s = spec('http://127.0.0.1/x', {
    headers: { 'user-agent': 'mine', 'X-Load-Step': 3 },
    tags: { name: 'statement', step: 3 },
    timeout: '2s',
    redirects: 0,
    responseType: 'none',
  });
  assert.deepEqual(s.headers, { 'user-agent': 'mine', 'X-Load-Step': '3' });
  assert.deepEqual(s.customTags, { name: 'statement', step: '3' });
  assert.equal(s.name, 'statement');
  assert.equal(s.named, true);
  assert.equal(s.timeoutMs, 2000);
  assert.equal(s.redirectsLeft, 0);
  assert.equal(s.redirectsFromParams, true);
  assert.equal(s.responseType, 'none');
});

test('the template name of http.url names the request; discardResponseBodies means none', () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: http.url's names hold a literal ${}
  const template = 'http://h/a/${}';
  const built = buildRequestSpec(
    { ...DEFAULTS, discardResponseBodies: true },
    'GET',
    'http://h/a/1',
    template,
    undefined,
    {},
  );
  assert.ok(!(built instanceof Error));
  assert.equal(built.spec.name, template);
  assert.equal(built.spec.responseType, 'none');
});

test("the URL's credentials are basic auth, masked in the name, and held back for digest", () => {
  const basic = spec('http://user:pass@127.0.0.1/');
  assert.equal(basic.headers.Authorization, `Basic ${Buffer.from('user:pass').toString('base64')}`);
  assert.equal(basic.name, 'http://****:****@127.0.0.1/');
  const built = buildRequestSpec(DEFAULTS, 'GET', 'http://user:pass@127.0.0.1/', undefined, undefined, {
    auth: 'digest',
  });
  assert.ok(!(built instanceof Error));
  assert.equal(built.digest, true);
  assert.equal(built.spec.headers.Authorization, undefined);
  const own = buildRequestSpec(DEFAULTS, 'GET', 'http://user:pass@127.0.0.1/', undefined, undefined, {
    auth: 'digest',
    headers: { Authorization: 'Bearer t' },
  });
  assert.ok(!(own instanceof Error));
  assert.equal(own.digest, false, 'a request with its own Authorization does no digest exchange');
});

test('noConnectionReuse closes each connection; a body is encoded and compressed', () => {
  const s = spec(
    'http://h/',
    { compression: 'gzip' },
    'POST',
    { a: '1' },
    { ...DEFAULTS, noConnectionReuse: true },
  );
  assert.equal(s.headers.Connection, 'close');
  assert.equal(s.headers['Content-Encoding'], 'gzip');
  assert.ok(s.payload && s.payload[0] === 0x1f && s.payload[1] === 0x8b, 'gzip magic');
});

test('bad URLs and params are errors naming what is wrong', () => {
  const bad = (url: string, params: Params) => {
    const built = buildRequestSpec(DEFAULTS, 'GET', url, undefined, undefined, params);
    assert.ok(built instanceof Error);
    return built.message;
  };
  assert.match(bad('not a url', {}), /invalid URL "not a url"/);
  assert.match(bad('http://h/', { auth: 'ntlm' }), /params.auth "ntlm" is not supported/);
  assert.match(bad('http://h/', { redirects: -1 }), /params.redirects must be a whole number >= 0, got -1/);
  assert.match(bad('http://h/', { compression: 'zip' }), /zip/);
});

test("a redirect hop follows Go's rules for method, body, credentials and Referer", () => {
  const post = spec(
    'https://user:pw@a.example/form',
    { headers: { 'Content-Type': 'text/plain', Cookie: 'x=1' } },
    'POST',
    'hello',
  );
  const see = redirectSpec(post, '/done', 303);
  assert.ok(see);
  assert.equal(see.method, 'GET');
  assert.equal(see.payload, undefined);
  assert.equal(see.headers['Content-Type'], undefined);
  assert.equal(see.headers.Cookie, undefined, 'the Cookie header is made anew for each hop');
  assert.equal(see.headers.Referer, 'https://a.example/form', 'no credentials in the Referer');
  assert.equal(see.headers.Authorization, post.headers.Authorization, 'same host keeps credentials');
  assert.equal(see.redirectsLeft, 9);
  assert.equal(see.redirectsFollowed, 1);
  assert.equal(see.name, 'https://****:****@a.example/done', 'the new URL, credentials masked');

  const again = redirectSpec(post, 'http://b.example/form', 307);
  assert.ok(again);
  assert.equal(again.method, 'POST');
  assert.equal(again.payload?.toString(), 'hello');
  assert.equal(again.headers.Authorization, undefined, 'another host gets no credentials');
  assert.equal(again.headers.Referer, undefined, 'no Referer from https to http');
  assert.equal(redirectSpec(post, 'http://[bad', 302), undefined);
});

test('a named request keeps its name across redirects', () => {
  const s = spec('http://h/a', { tags: { name: 'start' } });
  assert.equal(redirectSpec(s, '/b', 302)?.name, 'start');
});

test("cookies join the request's own Cookie header, as Go's AddCookie does", () => {
  const jar = new CookieJar();
  jar.set('http://h/', 'session', 'abc');
  const s = spec('http://h/', { headers: { cookie: 'a=1' }, cookies: { b: '2' } });
  addCookieHeader(s, jar);
  assert.match(s.headers.cookie ?? '', /^a=1; /);
  assert.match(s.headers.cookie ?? '', /session=abc/);
  assert.match(s.headers.cookie ?? '', /b=2/);
  const plain = spec('http://h/');
  addCookieHeader(plain, undefined);
  assert.equal(plain.headers.Cookie, undefined);
});

test('requestBytes counts the request line, Host, headers and body', () => {
  const s = spec('http://h:81/p', { headers: { A: 'b' } }, 'POST', 'xyz', { ...DEFAULTS, userAgent: '' });
  // "POST /p HTTP/1.1\r\n" = 4 + 2 + 12; "Host: h:81\r\n" = 6 + 4 + 2; "A: b\r\n" = 1 + 1 + 4; body 3
  assert.equal(requestBytes(s), 4 + 2 + 12 + (6 + 4 + 2) + (1 + 1 + 4) + 3);
});
