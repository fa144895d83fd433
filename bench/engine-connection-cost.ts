// Benchmark: what opening a connection costs the engine, against a request on a connection
// already open. Explains why a cold constant-rate start at thousands of requests/s is
// expensive (docs/engine.md, "How it keeps time": what is left).
//
//   npm run bench:engine-connections [-- CONCURRENT=300 ROUNDS=5]
//
// The target (bench/lib/target-server.mjs) runs pinned to core 1; this process should run
// pinned to core 0 (the npm script does). Each round sends CONCURRENT requests at once
// through fresh connection pools (one new connection each), then CONCURRENT more on the
// same, now open, connections; the main thread's CPU per request is reported for both.
// The first round is a warm-up and is left out.
import { ConnectionPools } from '../engine/js/modules/connection-pool.ts';
import { startTarget } from './lib/load-bench.ts';

const concurrent = Number(process.argv[2] ?? 300);
const rounds = Number(process.argv[3] ?? 5);

function send(pools: ConnectionPools, origin: string): Promise<void> {
  return new Promise((resolve, reject) =>
    pools.dispatch(
      { origin, path: '/', method: 'GET' },
      {
        onResponseStart() {},
        onResponseData() {},
        onResponseEnd: () => resolve(),
        onResponseError: (_c, error) => reject(error),
      },
    ),
  );
}

async function cpuUsOf(work: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

const target = await startTarget('1');
try {
  const fresh: number[] = [];
  const reused: number[] = [];
  for (let round = 0; round <= rounds; round++) {
    const pools = new ConnectionPools({ keepAliveTimeoutMs: 60_000 });
    const burst = () =>
      Promise.all(Array.from({ length: concurrent }, () => send(pools, target.url))).then(() => undefined);
    const opening = await cpuUsOf(burst);
    const connections = pools.connections;
    const onOpen = await cpuUsOf(burst);
    await pools.close();
    if (round === 0) continue;
    fresh.push(opening / connections);
    reused.push(onOpen / concurrent);
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  process.stdout.write(
    `${JSON.stringify(
      {
        node: process.version,
        concurrent,
        rounds,
        cpuUsPerRequestOnNewConnection: Math.round(median(fresh)),
        cpuUsPerRequestOnOpenConnection: Math.round(median(reused)),
        connectionCostUs: Math.round(median(fresh) - median(reused)),
      },
      null,
      2,
    )}\n`,
  );
} finally {
  target.child.kill();
}
