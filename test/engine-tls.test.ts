// HTTPS in the engine: k6's tls_version tag and handshake timing, the unknown-authority
// error (1310) for a self-signed server, and insecureSkipTLSVerify.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runScript, writeScript } from './helpers/engine.ts';

const fixtures = new URL('./fixtures/tls/', import.meta.url);

test('https: a self-signed server fails with 1310 unless insecureSkipTLSVerify; samples carry tls_version', async () => {
  const server = createServer(
    {
      cert: readFileSync(new URL('localhost-cert.pem', fixtures)),
      key: readFileSync(new URL('localhost-key.pem', fixtures)),
    },
    (_req, res) => res.end('ok'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const script = (options: string) => `
import http from 'k6/http';
export const options = { iterations: 1${options} };
export default async function () {
  const res = await http.asyncRequest('GET', '${url}');
  if (res.status === 200) console.log('response tls ' + res.tls_version + ' ' + res.tls_cipher_suite);
}`;
  try {
    const strict = await runScript(await writeScript(script('')));
    const refused = strict.rows.find((r) => r.metric_name === 'http_reqs');
    assert.deepEqual(
      [refused?.status, refused?.error_code],
      ['0', '1310'],
      'an unknown authority is error 1310, as in k6',
    );
    assert.match(refused?.error ?? '', /x509: certificate signed by unknown authority/);

    const insecure = await runScript(await writeScript(script(', insecureSkipTLSVerify: true')));
    assert.equal(insecure.exitCode, 0, insecure.logs.join('\n'));
    const ok = insecure.rows.find((r) => r.metric_name === 'http_reqs');
    assert.deepEqual([ok?.status, ok?.tls_version, ok?.proto], ['200', 'tls1.3', 'HTTP/1.1']);
    // The response says it too, with the suite's IANA name (as Go's names it for k6).
    assert.ok(
      insecure.logs.some((l) => /response tls tls1\.3 TLS_(AES|CHACHA20)_\w+/.test(l)),
      insecure.logs.join('\n'),
    );
    const handshake = insecure.rows.find((r) => r.metric_name === 'http_req_tls_handshaking');
    assert.ok(Number(handshake?.metric_value) > 0, 'the TLS handshake is timed');

    const flagged = await runScript(await writeScript(script('')), {
      overrides: { insecureSkipTLSVerify: true },
    });
    assert.equal(
      flagged.rows.find((r) => r.metric_name === 'http_reqs')?.status,
      '200',
      'the CLI override works too',
    );
  } finally {
    server.close();
  }
});

test('https with HTTP/2: the server chooses h2, a VU multiplexes over its one connection, proto is HTTP/2.0', async () => {
  const { createSecureServer } = await import('node:http2');
  const server = createSecureServer(
    {
      cert: readFileSync(new URL('localhost-cert.pem', fixtures)),
      key: readFileSync(new URL('localhost-key.pem', fixtures)),
      allowHTTP1: true,
    },
    (req, res) => {
      setTimeout(() => res.end(`ok ${req.httpVersion}`), 20);
    },
  );
  let sessions = 0;
  server.on('session', () => sessions++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    const run = await runScript(
      await writeScript(`
import http from 'k6/http';
export const options = { insecureSkipTLSVerify: true, scenarios: { s: { executor: 'per-vu-iterations', vus: 8, iterations: 3 } } };
export default async function () {
  const res = await http.asyncRequest('GET', '${url}');
  if (res.proto !== 'HTTP/2.0' || res.body !== 'ok 2.0' || res.status_text !== '200 OK') throw new Error(res.proto + ' ' + res.body + ' ' + res.status_text);
}`),
    );
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    const reqs = run.rows.filter((r) => r.metric_name === 'http_reqs');
    assert.equal(reqs.length, 24);
    assert.ok(
      reqs.every((r) => r.proto === 'HTTP/2.0' && r.tls_version === 'tls1.3' && r.status === '200'),
      'every request went over h2',
    );
    assert.ok(!run.logs.some((l) => l.startsWith('error')), run.logs.join('\n'));
    assert.ok(
      sessions >= 1 && sessions <= 8,
      `each VU's own HTTP/2 connection, as k6's per-VU transport (${sessions} sessions)`,
    );
  } finally {
    server.close();
  }
});

test('tlsAuth presents a client certificate to a server that requires one; tlsVersion caps the version', async () => {
  const cert = readFileSync(new URL('localhost-cert.pem', fixtures));
  const key = readFileSync(new URL('localhost-key.pem', fixtures));
  // Trusts only the fixture certificate, as a client certificate too.
  const server = createServer(
    { cert, key, ca: cert, requestCert: true, rejectUnauthorized: true },
    (req, res) =>
      res.end(`hello ${(req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject?.CN}`),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const dir = fileURLToPath(fixtures);
  const script = (options: string) => `
import http from 'k6/http';
const cert = open('${dir}localhost-cert.pem');
const key = open('${dir}localhost-key.pem');
export const options = { iterations: 1, insecureSkipTLSVerify: true${options} };
export default async function () {
  const res = await http.asyncRequest('GET', '${url}');
  console.log('answer', res.status, res.body);
}`;
  try {
    const withCert = await runScript(
      await writeScript(
        script(", tlsAuth: [{ domains: ['127.0.0.1'], cert, key }], tlsVersion: { max: 'tls1.2' }"),
      ),
    );
    assert.equal(withCert.exitCode, 0, withCert.logs.join('\n'));
    assert.ok(
      withCert.logs.some((l) => l.includes('answer 200 hello localhost')),
      withCert.logs.join('\n'),
    );
    const req = withCert.rows.find((r) => r.metric_name === 'http_reqs');
    assert.equal(req?.tls_version, 'tls1.2', 'tlsVersion max tls1.2 was honoured');
    const without = await runScript(await writeScript(script('')));
    const refused = without.rows.find((r) => r.metric_name === 'http_reqs');
    assert.notEqual(refused?.status, '200', 'without a client certificate the server refuses');
    const bad = await runScript(await writeScript(script(", tlsVersion: 'tls9', tlsAuth: [{ cert: 1 }]")));
    assert.equal(bad.exitCode, 104, 'invalid TLS options are config errors');
  } finally {
    server.close();
  }
});
