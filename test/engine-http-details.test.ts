// k6/http details the engine reproduces: the User-Agent option, and response bodies read
// through their Content-Encoding (gzip, deflate, br), with error 1701 when that fails.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import {
  brotliCompressSync,
  brotliDecompressSync,
  deflateSync,
  gunzipSync,
  gzipSync,
  inflateSync,
} from 'node:zlib';
import { DEFAULT_USER_AGENT } from '../engine/config/options.ts';
import { checkResults, runScript, writeScript } from './helpers/engine.ts';

test('User-Agent: the engine names itself, options.userAgent and a request header override it', async () => {
  const agents: string[] = [];
  const server = createServer((req, res) => {
    agents.push(req.headers['user-agent'] ?? '(none)');
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const script = (options: string) => `
import http from 'k6/http';
export const options = { iterations: 1${options} };
export default async function () {
  await http.asyncRequest('GET', '${url}');
  await http.asyncRequest('GET', '${url}', null, { headers: { 'user-agent': 'per-request' } });
}`;
  try {
    assert.equal((await runScript(await writeScript(script('')))).exitCode, 0);
    assert.equal((await runScript(await writeScript(script(", userAgent: 'my-agent/1'")))).exitCode, 0);
    assert.equal((await runScript(await writeScript(script(", userAgent: ''")))).exitCode, 0);
    assert.deepEqual(agents, [
      DEFAULT_USER_AGENT,
      'per-request',
      'my-agent/1',
      'per-request',
      '(none)',
      'per-request',
    ]);
    assert.match(DEFAULT_USER_AGENT, /^plateau\/\d+\.\d+\.\d+ \(k6 compatible\)$/);
  } finally {
    server.close();
  }
});

test('compressed bodies are decompressed as k6 does; one that is not valid is error 1701', async () => {
  const json = JSON.stringify({ account: 42, lines: Array.from({ length: 50 }, (_, i) => i) });
  const encodings: Record<string, Buffer> = {
    gzip: gzipSync(json),
    deflate: deflateSync(json),
    br: brotliCompressSync(json),
    broken: Buffer.from('not gzip at all'),
  };
  const server = createServer((req, res) => {
    const which = (req.url ?? '/').slice(1);
    res.writeHead(200, { 'Content-Encoding': which === 'broken' ? 'gzip' : which });
    res.end(encodings[which]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const run = await runScript(
      await writeScript(`
import http from 'k6/http';
import { check } from 'k6';
export const options = { iterations: 1 };
export default async function () {
  for (const which of ['gzip', 'deflate', 'br']) {
    const res = await http.asyncRequest('GET', '${base}/' + which, null, { tags: { which } });
    check(res, { ['decompressed ' + which]: (r) => r.json('account') === 42 && r.json().lines.length === 50 });
  }
  const broken = await http.asyncRequest('GET', '${base}/broken', null, { tags: { which: 'broken' } });
  check(broken, { 'a broken body is 1701 with its status kept': (r) => r.error_code === 1701 && r.status === 200 && r.error !== '' });
  const skipped = await http.asyncRequest('GET', '${base}/broken', null, { responseType: 'none', tags: { which: 'none' } });
  check(skipped, { 'a discarded body is not decompressed': (r) => r.error_code === 0 });
}`),
    );
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    const results = checkResults(run.rows);
    assert.equal(Object.keys(results).length, 5, JSON.stringify(results));
    for (const [name, [passes, fails]] of Object.entries(results))
      assert.deepEqual([passes, fails], [1, 0], name);
    const broken = run.rows.find((r) => r.metric_name === 'http_reqs' && r.extra_tags === 'which=broken');
    assert.deepEqual(
      [broken?.status, broken?.error_code],
      ['200', '1701'],
      'the sample carries the error too',
    );
  } finally {
    server.close();
  }
});

test('each VU keeps its own connections, and arrival-rate iterations go to the longest-idle VU, as in k6', async () => {
  const server = createServer((_req, res) => res.end('ok'));
  const sockets = new Set<unknown>();
  server.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    const run = await runScript(
      await writeScript(`
import http from 'k6/http';
import exec from 'k6/execution';
export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 10, duration: '2s', preAllocatedVUs: 5 } } };
export default async function () {
  await http.asyncRequest('GET', '${url}', null, { tags: { vu: String(exec.vu.idInTest) } });
}`),
    );
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    const reqs = run.rows.filter((r) => r.metric_name === 'http_reqs');
    // 100 ms between starts and five VUs: a start finds no idle VU (and is dropped) only if
    // the process stalls for half a second, which 40/s (125 ms) left to a saturated machine.
    assert.equal(reqs.length, 20);
    const perVu = new Map<string, number>();
    for (const r of reqs) perVu.set(r.extra_tags ?? '', (perVu.get(r.extra_tags ?? '') ?? 0) + 1);
    assert.equal(perVu.size, 5, 'all five VUs took iterations in turn');
    // 4 each when every request ends within the 100 ms between starts; a slow one leaves its
    // VU busy and the next idle VU takes that start, which is the same rule. The most recently
    // idle VU would have taken nearly all.
    assert.ok(
      [...perVu.values()].every((n) => n >= 2 && n <= 6),
      JSON.stringify([...perVu]),
    );
    assert.equal(sockets.size, 5, 'one keep-alive connection per VU, as k6 opens them');
  } finally {
    server.close();
  }
});

test('noConnectionReuse dials for every request; noVUConnectionReuse once per iteration', async () => {
  const server = createServer((_req, res) => res.end('ok'));
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const script = (option: string) => `
import http from 'k6/http';
export const options = { ${option}: true, scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 3 } } };
export default async function () {
  await http.asyncRequest('GET', '${url}');
  await http.asyncRequest('GET', '${url}');
}`;
  try {
    const everyRequest = await runScript(await writeScript(script('noConnectionReuse')));
    assert.equal(everyRequest.exitCode, 0, everyRequest.logs.join('\n'));
    assert.equal(connections, 6, 'six requests, six connections');
    const connecting = everyRequest.rows.filter((r) => r.metric_name === 'http_req_connecting');
    assert.ok(
      connecting.every((r) => Number(r.metric_value) > 0),
      'each request timed its own dial',
    );
    connections = 0;
    const perIteration = await runScript(await writeScript(script('noVUConnectionReuse')));
    assert.equal(perIteration.exitCode, 0, perIteration.logs.join('\n'));
    assert.equal(connections, 3, 'three iterations, three connections, each reused within its iteration');
  } finally {
    server.close();
  }
});

test('options.hosts dials the mapped address (name or name:port) and keeps the Host header', async () => {
  const hostsSeen: string[] = [];
  const server = createServer((req, res) => {
    hostsSeen.push(req.headers.host ?? '');
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const run = await runScript(
      await writeScript(`
import http from 'k6/http';
export const options = { iterations: 1, hosts: { 'plateau.test': '127.0.0.1', 'api.plateau.test:80': '127.0.0.1:${port}' } };
export default async function () {
  const a = await http.asyncRequest('GET', 'http://plateau.test:${port}/');
  const b = await http.asyncRequest('GET', 'http://api.plateau.test/');
  if (a.status !== 200 || b.status !== 200) throw new Error(a.status + ' ' + b.status + ' ' + a.error + ' ' + b.error);
  console.log('remote ' + a.remote_ip + ':' + a.remote_port + ' tls=' + JSON.stringify(a.tls_version));
}`),
    );
    // The address the connection reached, not the name in the URL (as Go reports it for k6).
    assert.ok(
      run.logs.some((l) => l.includes(`remote 127.0.0.1:${port} tls=""`)),
      run.logs.join('\n'),
    );
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    assert.ok(!run.logs.some((l) => l.startsWith('error')), run.logs.join('\n'));
    assert.deepEqual(hostsSeen, [`plateau.test:${port}`, 'api.plateau.test']);
  } finally {
    server.close();
  }
});

test("auth: credentials in the URL are basic auth; params.auth 'digest' answers the server's challenge", async () => {
  const md5 = (text: string) => createHash('md5').update(text).digest('hex');
  const seen: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    const authorization = req.headers.authorization;
    seen.push(authorization);
    if (req.url === '/basic') {
      res.end(authorization ?? 'none');
      return;
    }
    if (!authorization?.startsWith('Digest ')) {
      res.writeHead(401, {
        'WWW-Authenticate': 'Digest realm="plateau", nonce="n0nce", qop="auth", opaque="0paque"',
      });
      res.end();
      return;
    }
    // The server's own check, written from RFC 7616 independently of the engine's code.
    const field = (name: string) => new RegExp(`${name}="?([^",]+)"?`).exec(authorization)?.[1] ?? '';
    const ha1 = md5('user:plateau:s3cret');
    const ha2 = md5(`GET:${field('uri')}`);
    const expected = md5(`${ha1}:n0nce:${field('nc')}:${field('cnonce')}:auth:${ha2}`);
    const ok =
      field('response') === expected && field('opaque') === '0paque' && field('uri') === '/digest?x=1';
    res.writeHead(ok ? 200 : 403);
    res.end(ok ? 'welcome' : 'wrong');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const run = await runScript(
      await writeScript(`
import http from 'k6/http';
export const options = { iterations: 1 };
export default async function () {
  const basic = await http.asyncRequest('GET', 'http://user:s3cret@127.0.0.1:${port}/basic');
  const digest = await http.asyncRequest('GET', 'http://user:s3cret@127.0.0.1:${port}/digest?x=1', null, { auth: 'digest' });
  let refused = '';
  try { await http.asyncRequest('GET', 'http://user:s3cret@127.0.0.1:${port}/x', null, { auth: 'ntlm' }); } catch (e) { refused = String(e); }
  console.log(JSON.stringify({ basic: basic.body, digest: [digest.status, digest.body], refused }));
}`),
    );
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    const line = run.logs.find((l) => l.includes('"basic"'))!;
    // Log lines read `level message {fields}`.
    const result = JSON.parse(line.slice(line.indexOf(' ') + 1, line.lastIndexOf(' {')));
    assert.equal(result.basic, `Basic ${Buffer.from('user:s3cret').toString('base64')}`);
    assert.deepEqual(result.digest, [200, 'welcome']);
    assert.match(result.refused, /params\.auth "ntlm" is not supported/);
    // The digest request went out first without credentials, then answered the challenge.
    assert.equal(seen[1], undefined);
    assert.match(
      seen[2] ?? '',
      /^Digest username="user", realm="plateau", nonce="n0nce", uri="\/digest\?x=1"/,
    );
    // Both are samples; the challenge's 401 counts as expected, as in k6.
    const digestRows = run.rows.filter(
      (r) => r.metric_name === 'http_req_failed' && (r.url ?? '').includes('/digest'),
    );
    assert.deepEqual(
      digestRows.map((r) => [r.status, r.metric_value]),
      [
        ['401', '0.000000'],
        ['200', '0.000000'],
      ],
    );
    // Credentials never reach the name/url tags.
    assert.ok(run.rows.every((r) => !(r.url ?? '').includes('s3cret')));
  } finally {
    server.close();
  }
});

test('params.compression compresses the body in order and says so in Content-Encoding; unknown algorithms are refused', async () => {
  const received: { encoding: string | undefined; body: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      // Undo the encodings last-applied first, as a server reads Content-Encoding.
      const encodings = (req.headers['content-encoding'] ?? '').split(',').map((e) => e.trim());
      for (const encoding of encodings.reverse()) {
        if (encoding === 'gzip') body = gunzipSync(body);
        else if (encoding === 'deflate') body = inflateSync(body);
        else if (encoding === 'br') body = brotliDecompressSync(body);
      }
      received.push({ encoding: req.headers['content-encoding'], body: body.toString() });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    const run = await runScript(
      await writeScript(`
import http from 'k6/http';
export const options = { iterations: 1 };
export default async function () {
  const text = 'plateau '.repeat(100);
  await http.asyncRequest('POST', '${url}', text, { compression: 'gzip' });
  await http.asyncRequest('POST', '${url}', text, { compression: 'deflate, br' });
  const refused = [];
  for (const compression of ['zstd', 'lz4']) {
    try { await http.asyncRequest('POST', '${url}', text, { compression }); } catch (e) { refused.push(String(e)); }
  }
  try {
    await http.asyncRequest('POST', '${url}', text, { compression: 'gzip', headers: { 'Content-Encoding': 'gzip' } });
  } catch (e) { refused.push(String(e)); }
  console.log('refused: ' + refused.join(' | '));
}`),
    );
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    const text = 'plateau '.repeat(100);
    assert.deepEqual(received, [
      { encoding: 'gzip', body: text },
      { encoding: 'deflate, br', body: text },
    ]);
    const refusals = run.logs.find((l) => l.includes('refused: ')) ?? '';
    assert.match(refusals, /"zstd" is not an algorithm the engine compresses with .*Node 20 has no zstd/);
    assert.match(refusals, /"lz4" is not an algorithm/);
    assert.match(refusals, /sets Content-Encoding itself/);
    // data_sent counts the compressed bytes, far fewer than the 800-byte text.
    const sent = run.rows
      .filter((r) => r.metric_name === 'data_sent')
      .reduce((sum, r) => sum + Number(r.metric_value), 0);
    assert.ok(sent > 0 && sent < 2 * 800, `data_sent ${sent}`);
  } finally {
    server.close();
  }
});

test('http.file() and an object body holding one make a multipart/form-data request, as in k6', async () => {
  let contentType = '';
  let raw = '';
  const server = createServer((req, res) => {
    contentType = req.headers['content-type'] ?? '';
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      raw = Buffer.concat(chunks).toString('latin1');
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/upload`;
  try {
    const run = await runScript(
      await writeScript(`
import http from 'k6/http';
export const options = { iterations: 1, tlsVersion: http.TLS_1_2 };
export default async function () {
  const bytes = new Uint8Array([0, 1, 2, 255]).buffer;
  const f = http.file(bytes, 'report.bin', 'application/x-report');
  const unnamed = http.file('plain text');
  console.log('file: ' + [f.filename, f.content_type, unnamed.content_type, /^\\d+$/.test(unnamed.filename)].join(' '));
  await http.asyncRequest('POST', '${url}', { title: 'Q3 "final"', report: f });
}`),
    );
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    assert.ok(
      run.logs.some((l) => l.includes('file: report.bin application/x-report application/octet-stream true')),
    );
    const boundary = /^multipart\/form-data; boundary=(\S+)$/.exec(contentType)?.[1];
    assert.ok(boundary, contentType);
    const parts = raw.split(`--${boundary}`);
    assert.equal(parts.at(-1), '--\r\n', 'closing boundary');
    assert.equal(parts[1], '\r\nContent-Disposition: form-data; name="title"\r\n\r\nQ3 "final"\r\n');
    assert.equal(
      parts[2],
      `\r\nContent-Disposition: form-data; name="report"; filename="report.bin"\r\nContent-Type: application/x-report\r\n\r\n${Buffer.from([0, 1, 2, 255]).toString('latin1')}\r\n`,
    );
  } finally {
    server.close();
  }
});
