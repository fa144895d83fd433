// An example of instrumenting your own service for plateau: a small orders API on a
// node-postgres pool, which answers GET /steps through plateau's instrumentation library,
// so a study of it names its pool as the limit the way it does for the reference service.
//
//   DATABASE_URL=postgres://… PORT=8080 node --import tsx examples/orders-service/server.ts
//   npx plateau run --target http://127.0.0.1:8080 --endpoint /orders --method POST \
//     --body '{"sku":"a1","qty":1}' --header 'Content-Type: application/json' --expect-status 201
//
// POST /orders inserts an order (each insert holds its connection for WORK_MS, so POOL_MAX
// connections serve about POOL_MAX × 1000 / WORK_MS orders a second); GET /orders/:id reads
// one. A request that waits longer than ACQUIRE_TIMEOUT_MS for a connection is refused with
// 503 and Retry-After, and counted as shed.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { StepInstrumentation, sendJson } from '../../target-service/instrumentation/index.ts';

export interface OrdersServiceOptions {
  databaseUrl: string;
  port?: number;
  poolMax?: number;
  workMs?: number;
  acquireTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface OrdersService {
  url: string;
  close(): Promise<void>;
}

export async function startOrdersService(options: OrdersServiceOptions): Promise<OrdersService> {
  const poolMax = options.poolMax ?? 3;
  const workMs = options.workMs ?? 20;
  const acquireTimeoutMs = options.acquireTimeoutMs ?? 1000;
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: poolMax,
    connectionTimeoutMillis: acquireTimeoutMs,
  });
  // An idle client whose database goes away (a restart, a shutdown) emits 'error' on the
  // pool: without a listener that is an uncaught exception that ends the service.
  pool.on('error', (error) => options.log?.(`database connection lost: ${error.message}`));
  await pool.query(
    'CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, sku text NOT NULL, qty int NOT NULL, created timestamptz NOT NULL DEFAULT now())',
  );
  // The instrumentation: /steps, /steps/live, /steps/reset and /metrics, and each request's
  // pool wait and query time recorded in the step it was sent in (X-Load-Step).
  const steps = new StepInstrumentation({
    service: 'orders-example',
    pool,
    settings: { poolMax, queueMax: null, acquireTimeoutMs, shed: true, extra: { workMs } },
    ...(options.log ? { log: options.log } : {}),
  });

  const handle = async (
    req: IncomingMessage,
    res: ServerResponse,
    trace: ReturnType<typeof steps.traceRequest>,
  ) => {
    const url = new URL(req.url ?? '/', 'http://orders');
    if (req.method === 'POST' && url.pathname === '/orders') {
      const order = await readJson(req);
      if (!order || typeof order.sku !== 'string' || !Number.isInteger(order.qty)) {
        return sendJson(res, 400, { error: 'bad_order', message: 'send {"sku": "…", "qty": 1}' });
      }
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch {
        steps.shed(trace, 'timeout');
        return sendJson(res, 503, { error: 'overloaded' }, { 'retry-after': '1' });
      }
      try {
        const { rows } = await client.query(
          'INSERT INTO orders (sku, qty) SELECT $1, $2 FROM pg_sleep($3::float / 1000) RETURNING id',
          [order.sku, order.qty, workMs],
        );
        return sendJson(res, 201, { id: rows[0].id });
      } finally {
        client.release();
      }
    }
    const match = /^\/orders\/(\d+)$/.exec(url.pathname);
    if (req.method === 'GET' && match) {
      const { rows } = await pool.query('SELECT id, sku, qty FROM orders WHERE id = $1', [Number(match[1])]);
      return rows[0] ? sendJson(res, 200, rows[0]) : sendJson(res, 404, { error: 'not_found' });
    }
    return sendJson(res, 404, { error: 'not_found', message: 'POST /orders or GET /orders/:id' });
  };

  const server = createServer((req, res) => {
    if (steps.handleAdminRoute(req, res)) return;
    const trace = steps.traceRequest(req, res);
    steps
      .run(trace, () => handle(req, res, trace))
      .catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: 'internal', message: String(error) });
        else res.destroy();
      });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      steps.close();
      await pool.end();
    },
  };
}

function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(text) as Record<string, unknown>);
      } catch {
        resolve(undefined);
      }
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    process.stderr.write(
      'orders-example: set DATABASE_URL (e.g. postgres://plateau:plateau@127.0.0.1:5432/plateau)\n',
    );
    process.exit(2);
  }
  const service = await startOrdersService({
    databaseUrl,
    port: Number(process.env.PORT ?? 8080),
    poolMax: Number(process.env.POOL_MAX ?? 3),
  });
  process.stdout.write(`orders-example listening on ${service.url}\n`);
}
