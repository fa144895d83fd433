// The connection pool against real servers on port 0: reuse, Go's "first ready connection
// wins", and dial errors.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { buildConnector, type Dispatcher } from 'undici';
import { startTestServer } from '../../../test/helpers/test-server.ts';
import { ConnectionPools, type TracedHandler } from './connection-pool.ts';

/** Sends one GET through `pools`; resolves with its status and when it finished. */
function get(pools: ConnectionPools, origin: string, path = '/'): Promise<{ status: number; atMs: number }> {
  return new Promise((resolve, reject) => {
    let status = 0;
    const handler: Dispatcher.DispatchHandler = {
      onResponseStart: (_c, code) => {
        status = code;
      },
      onResponseData: () => undefined,
      onResponseEnd: () => resolve({ status, atMs: performance.now() }),
      onResponseError: (_c, error) => reject(error),
    };
    pools.dispatch({ origin, path, method: 'GET' }, handler);
  });
}

test('sequential requests reuse one keep-alive connection; concurrent ones open what they need', async () => {
  const server = await startTestServer({ delayMs: 20 });
  const sockets = new Set<unknown>();
  server.server.on('connection', (socket) => sockets.add(socket));
  const pools = new ConnectionPools({ keepAliveTimeoutMs: 10_000 });
  try {
    for (let i = 0; i < 5; i++) assert.equal((await get(pools, server.url)).status, 200);
    assert.equal(sockets.size, 1, 'one connection for five requests in a row');
    await Promise.all(Array.from({ length: 4 }, () => get(pools, server.url)));
    assert.ok(sockets.size <= 5 && pools.connections === sockets.size, `connections: ${sockets.size}`);
  } finally {
    await pools.close();
  }
});

test('a connection the server closes is dialled anew by its client for the next request', async () => {
  // Every response closes its connection: the client's first connection is the one the
  // pool dialled, each later one the client dials itself.
  const server = createServer((_request, response) => {
    response.setHeader('connection', 'close');
    response.end('ok');
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const sockets = new Set<unknown>();
  server.on('connection', (socket) => sockets.add(socket));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pools = new ConnectionPools({ keepAliveTimeoutMs: 10_000 });
  try {
    for (let i = 0; i < 4; i++) assert.equal((await get(pools, origin)).status, 200, `request ${i + 1}`);
    assert.equal(sockets.size, 4, 'one connection per request');
  } finally {
    await pools.close();
    server.close();
  }
});

test('a waiting request takes a connection freed by another instead of waiting for its slow dial', async () => {
  const server = await startTestServer({ delayMs: 50 });
  const real = buildConnector({});
  let dials = 0;
  // The second dial takes 400 ms; the first is immediate.
  const connector: buildConnector.connector = (options, callback) => {
    dials++;
    if (dials === 2) setTimeout(() => real(options, callback), 400);
    else real(options, callback);
  };
  const pools = new ConnectionPools({ keepAliveTimeoutMs: 10_000, connector });
  try {
    const started = performance.now();
    const first = get(pools, server.url, '/a');
    await new Promise((r) => setTimeout(r, 10)); // the first request is on its connection
    const second = get(pools, server.url, '/b');
    const [a, b] = await Promise.all([first, second]);
    assert.equal(dials, 2, 'the second request set off a dial of its own');
    assert.ok(a.atMs - started < 300, 'the first request was served at once');
    assert.ok(
      b.atMs - started < 300,
      `the second request took the first connection when it freed up (${Math.round(b.atMs - started)} ms), not the 400 ms dial`,
    );
    await new Promise((r) => setTimeout(r, 450));
    assert.equal(pools.connections, 2, 'the late connection joins the pool as an idle one');
    // Its socket is not yet undici's (no request has used it): close() must still close it,
    // or the engine process would never exit.
    await pools.close();
    const open = () => new Promise<number>((r) => server.server.getConnections((_e, n) => r(n)));
    for (let i = 0; i < 50 && (await open()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await open(), 0, 'every connection, used or not, is closed');
  } finally {
    await pools.close();
  }
});

test('a failed dial fails the oldest waiting request with the socket error', async () => {
  const server = await startTestServer();
  const port = new URL(server.url).port;
  server.server.closeAllConnections();
  await new Promise<void>((resolve) => server.server.close(() => resolve()));
  const pools = new ConnectionPools({ keepAliveTimeoutMs: 1000 });
  try {
    await assert.rejects(get(pools, `http://127.0.0.1:${port}`), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'ECONNREFUSED');
      return true;
    });
  } finally {
    await pools.close();
  }
});

test('an IPv6 loopback origin ([::1]) is dialled without its brackets', async () => {
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '::1', resolve));
  const { port } = server.address() as AddressInfo;
  const pools = new ConnectionPools({ keepAliveTimeoutMs: 1000 });
  try {
    assert.equal((await get(pools, `http://[::1]:${port}`)).status, 200);
  } finally {
    await pools.close();
    server.close();
  }
});

/** Sends one GET and lists the connection moments its handler heard, in order. */
function tracedGet(pools: ConnectionPools, origin: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const heard: string[] = [];
    const handler: TracedHandler = {
      onConnectStart: () => heard.push('connect-start'),
      onConnectDone: () => heard.push('connect-done'),
      onTlsHandshakeDone: () => heard.push('tls-done'),
      onRequestStart: () => heard.push('request-start'),
      onRequestWritten: () => heard.push('written'),
      onResponseStart: () => heard.push('response-start'),
      onResponseData: () => undefined,
      onResponseEnd: () => resolve(heard),
      onResponseError: (_c, error) => reject(error),
    };
    pools.dispatch({ origin, path: '/', method: 'GET' }, handler);
  });
}

test('a request hears its own dial, then being written; a request on a reused connection only the latter', async () => {
  const server = await startTestServer({ delayMs: 5 });
  const pools = new ConnectionPools({ keepAliveTimeoutMs: 10_000 });
  try {
    assert.deepEqual(await tracedGet(pools, server.url), [
      'connect-start',
      'connect-done',
      'request-start',
      'written',
      'response-start',
    ]);
    assert.deepEqual(await tracedGet(pools, server.url), ['request-start', 'written', 'response-start']);
  } finally {
    await pools.close();
  }
});

test('over https the TLS handshake ends after the TCP connect and before the request starts', async () => {
  const fixtures = new URL('../../../test/fixtures/tls/', import.meta.url);
  const cert = readFileSync(new URL('localhost-cert.pem', fixtures));
  const server = createHttpsServer(
    { cert, key: readFileSync(new URL('localhost-key.pem', fixtures)) },
    (_q, res) => res.end('ok'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const pools = new ConnectionPools({ keepAliveTimeoutMs: 1000, connector: buildConnector({ ca: cert }) });
  try {
    assert.deepEqual(await tracedGet(pools, `https://127.0.0.1:${port}`), [
      'connect-start',
      'connect-done',
      'tls-done',
      'request-start',
      'written',
      'response-start',
    ]);
  } finally {
    await pools.close();
    server.close();
  }
});

test("a refused dial is still reported as connected (with its error), like Go's ConnectDone", async () => {
  const pools = new ConnectionPools({ keepAliveTimeoutMs: 1000 });
  const heard: string[] = [];
  try {
    await new Promise<void>((resolve) =>
      pools.dispatch(
        { origin: 'http://127.0.0.1:1', path: '/', method: 'GET' },
        {
          onConnectStart: () => heard.push('connect-start'),
          onConnectDone: () => heard.push('connect-done'),
          onResponseError: () => resolve(),
        },
      ),
    );
    assert.deepEqual(heard, ['connect-start', 'connect-done']);
  } finally {
    await pools.close();
  }
});
