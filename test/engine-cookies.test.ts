// k6's cookies in the engine: the VU jar, its reset per iteration, params.cookies and
// params.jar, res.cookies, http.cookieJar(), and cookies set on a redirect hop.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { checkResults, runScript, writeScript } from './helpers/engine.ts';

/** A server that sets cookies on /login and /redirect-set and echoes the Cookie header on /me. */
async function cookieServer(): Promise<{ base: string; close: () => void }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/login') {
      res.setHeader('Set-Cookie', ['session=abc; Path=/', 'theme=dark; Path=/; Max-Age=3600; HttpOnly']);
      res.end('ok');
    } else if (path === '/redirect-set') {
      res.writeHead(302, { Location: '/me', 'Set-Cookie': 'hop=1; Path=/' }).end();
    } else res.end(req.headers.cookie ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

test('cookies: a jar per VU emptied each iteration, request cookies, replace, res.cookies, cookieJar(), redirects', async () => {
  const { base, close } = await cookieServer();
  try {
    const run = await runScript(
      await writeScript(`
import http from 'k6/http';
import { check } from 'k6';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 2 } } };
export default async function () {
  const fresh = await http.asyncRequest('GET', '${base}/me');
  check(fresh, { 'each iteration starts with an empty jar': (r) => r.body === '' });
  const login = await http.asyncRequest('GET', '${base}/login');
  check(login, {
    'res.cookies lists the Set-Cookie headers': (r) =>
      r.cookies.session[0].value === 'abc' && r.cookies.theme[0].http_only === true && r.cookies.theme[0].max_age === 3600,
  });
  const me = await http.asyncRequest('GET', '${base}/me', null, { cookies: { extra: 'x', theme: { value: 'light', replace: true } } });
  check(me, { 'request cookies first, then the jar, replace wins': (r) => r.body === 'extra=x; theme=light; session=abc' });
  const jar = http.cookieJar();
  check(jar, { 'cookiesForURL': (j) => j.cookiesForURL('${base}/').session[0] === 'abc' });
  jar.delete('${base}/', 'session');
  jar.set('${base}/', 'manual', 'm');
  const after = await http.asyncRequest('GET', '${base}/me');
  check(after, { 'jar.delete and jar.set': (r) => r.body === 'theme=dark; manual=m' });
  const hop = await http.asyncRequest('GET', '${base}/redirect-set');
  check(hop, { 'a cookie set on a redirect is sent on the next hop': (r) => r.body.includes('hop=1') });
  const own = await http.asyncRequest('GET', '${base}/me', null, { jar: new http.CookieJar() });
  check(own, { 'params.jar stands in for the VU jar': (r) => r.body === '' });
  jar.clear('${base}/');
  const cleared = await http.asyncRequest('GET', '${base}/me');
  check(cleared, { 'jar.clear': (r) => r.body === '' });
}`),
    );
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    const results = checkResults(run.rows);
    assert.equal(Object.keys(results).length, 8, JSON.stringify(results));
    for (const [name, [passes, fails]] of Object.entries(results)) {
      assert.deepEqual([passes, fails], [2, 0], `${name}: ${passes} passed, ${fails} failed`);
    }
  } finally {
    close();
  }
});

test('options.noCookiesReset keeps a VU cookies across iterations', async () => {
  const { base, close } = await cookieServer();
  try {
    const run = await runScript(
      await writeScript(`
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
export const options = { noCookiesReset: true, scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 2 } } };
export default async function () {
  const me = await http.asyncRequest('GET', '${base}/me');
  if (exec.vu.iterationInScenario === 1) check(me, { 'the second iteration still has the session': (r) => r.body.includes('session=abc') });
  await http.asyncRequest('GET', '${base}/login');
}`),
    );
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    assert.deepEqual(checkResults(run.rows), { 'the second iteration still has the session': [1, 0] });
  } finally {
    close();
  }
});
