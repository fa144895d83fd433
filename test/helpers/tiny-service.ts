// A tiny HTTP service of the user's, as plateau.config's `service:` would start it: a Node
// script written to a directory, reading its settings from the env.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The script: listens on 127.0.0.1:PORT (0: any) and logs `ready on <port> POOL_MAX=<v>`;
 * every answer carries POOL_MAX in the `x-pool-max` header and the body. `/healthz` answers
 * 503 for WARMUP_MS after the start, then 200; `/served` the number of other requests
 * answered (a test's sign that the load reached it). On SIGTERM it logs `stopping after <n>
 * requests with POOL_MAX=<v>` and exits 0. MODE=exit writes an error and exits 3 at once;
 * MODE=never listens but never says it is ready and never answers /healthz with 200.
 * SPAWN_CHILD=<marker> starts a child process that ignores SIGTERM and runs until killed (to
 * prove that nothing the service started outlives it).
 */
const SCRIPT = `'use strict';
const http = require('node:http');
const { spawn } = require('node:child_process');
const mode = process.env.MODE || 'serve';
if (mode === 'exit') {
  console.error('cannot open the pool: boom');
  process.exit(3);
}
const poolMax = process.env.POOL_MAX || 'unset';
const startedMs = Date.now();
const warmupMs = Number(process.env.WARMUP_MS || 0);
if (process.env.SPAWN_CHILD)
  spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)", process.env.SPAWN_CHILD], {
    stdio: 'ignore',
  });
let served = 0;
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(mode === 'never' || Date.now() - startedMs < warmupMs ? 503 : 200);
    return res.end();
  }
  if (req.url === '/served') return res.end(String(served));
  if (req.url.startsWith('/steps')) {
    res.writeHead(404);
    return res.end();
  }
  served++;
  res.writeHead(200, { 'content-type': 'text/plain', 'x-pool-max': poolMax });
  res.end('pool ' + poolMax + '\\n');
});
server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  if (mode !== 'never') console.log('ready on ' + server.address().port + ' POOL_MAX=' + poolMax);
  else console.log('warming up forever');
});
process.on('SIGTERM', () => {
  console.log('stopping after ' + served + ' requests with POOL_MAX=' + poolMax);
  process.exit(0);
});
`;

/** Writes the tiny service into `dir` as `tiny-service.cjs` and returns its path. */
export async function writeTinyService(dir: string): Promise<string> {
  const path = join(dir, 'tiny-service.cjs');
  await writeFile(path, SCRIPT);
  return path;
}
