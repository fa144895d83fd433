// A plain HTTP server on port 0 for engine tests, with a per-request delay.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after } from 'node:test';

export interface TestServer {
  url: string;
  /** Requests received so far, with their headers. */
  requests: { url: string; headers: IncomingMessage['headers']; atMs: number }[];
  server: Server;
}

/**
 * Starts a server on 127.0.0.1:0 that answers every request after `delayMs` (default 0)
 * with `status` (default 200) and a small body; closed after the test file.
 */
export async function startTestServer(
  options: {
    delayMs?: number;
    status?: number;
    handle?: (req: IncomingMessage, res: ServerResponse) => void;
  } = {},
): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers, atMs: performance.now() });
    if (options.handle) return options.handle(req, res);
    const reply = () => {
      res.writeHead(options.status ?? 200, { 'content-type': 'text/plain' });
      res.end('ok');
    };
    if (options.delayMs) setTimeout(reply, options.delayMs);
    else reply();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}
