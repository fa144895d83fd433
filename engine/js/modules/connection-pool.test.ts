// The connection pool against real servers on port 0: reuse, Go's "first ready connection
// wins", and dial errors.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { buildConnector, Client, type Dispatcher } from 'undici';
import { startTestServer } from '../../../test/helpers/test-server.ts';
import { waitUntil } from '../../../test/helpers/wait-until.ts';
import { ConnectionPools, emptyIdleQueue, type TracedHandler } from './connection-pool.ts';

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
  // The second dial completes only when the test lets it: after both requests are served,
  // or, were the second one waiting for its own dial, after 5 s (and the test fails).
  let releaseDial: () => void = () => undefined;
  const dialReleased = new Promise<void>((resolve) => {
    releaseDial = resolve;
  });
  const deadline = setTimeout(releaseDial, 5000);
  let released = false;
  const connector: buildConnector.connector = (options, callback) => {
    dials++;
    if (dials === 2)
      void dialReleased.then(() => {
        released = true;
        real(options, callback);
      });
    else real(options, callback);
  };
  const pools = new ConnectionPools({ keepAliveTimeoutMs: 10_000, connector });
  try {
    const first = get(pools, server.url, '/a');
    // The first request is on its connection once the server has it; the server holds its
    // answer 50 ms, and the second request is sent in the same turn.
    const second = new Promise<Awaited<ReturnType<typeof get>>>((resolve, reject) =>
      server.server.once('request', () => get(pools, server.url, '/b').then(resolve, reject)),
    );
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(dials, 2, 'the second request set off a dial of its own');
    assert.equal(
      released,
      false,
      'the second request took the first connection when it freed up, not its dial',
    );
    releaseDial();
    await waitUntil(() => pools.connections === 2, 'the late connection joining the pool as an idle one');
    // Its socket is not yet undici's (no request has used it): close() must still close it,
    // or the engine process would never exit.
    await pools.close();
    const open = () => new Promise<number>((r) => server.server.getConnections((_e, n) => r(n)));
    await waitUntil(async () => (await open()) === 0, 'every connection, used or not, closed');
  } finally {
    clearTimeout(deadline);
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

test("an idle connection's undici queue is emptied before its next request: its array never grows", async () => {
  const server = await startTestServer({});
  const client = new Client(server.url, { pipelining: 1 });
  const queueKey = Object.getOwnPropertySymbols(client).find((key) => key.description === 'queue');
  assert.ok(
    queueKey,
    "undici's Client has no 'queue' symbol any more: emptyIdleQueue does nothing (see its comment)",
  );
  const slots = () => ((client as unknown as Record<symbol, unknown[]>)[queueKey] ?? []).length;
  const send = async () => {
    const response = await client.request({ path: '/', method: 'GET' });
    await response.body.text();
    return slots();
  };
  try {
    // Left alone, undici keeps every ended request's slot until 257 have ended: the growth
    // (and the promoted garbage) emptyIdleQueue prevents. Should this fail, undici no longer
    // does that, and emptyIdleQueue can go.
    let longestAlone = 0;
    for (let i = 0; i < 300; i++) longestAlone = Math.max(longestAlone, await send());
    assert.ok(longestAlone > 200, `undici alone kept at most ${longestAlone} slots`);
    let longest = 0;
    for (let i = 0; i < 300; i++) {
      emptyIdleQueue(client);
      longest = Math.max(longest, await send());
    }
    assert.equal(longest, 1, 'one slot: the request in flight');
  } finally {
    await client.close();
  }
});
