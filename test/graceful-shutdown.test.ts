// `plateau serve` stops gracefully on SIGTERM: in-flight requests complete, exit 0.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ServerLiveReport } from '../contract/index.ts';
import { fetchText } from './helpers/http.ts';
import { processesMatching, waitFor } from './helpers/processes.ts';
import { waitUntil } from './helpers/wait-until.ts';

const bin = fileURLToPath(new URL('../bin/plateau.js', import.meta.url));

test('SIGTERM with requests in flight: they complete, the database is gone, exit 0', async () => {
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { ...process.env, PORT: '0', QUERY_MS: '800', PAYLOAD_KB: '4', DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match?.[1]) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  const dataDir = /data in (\S+)\)/.exec(stderr)?.[1];
  assert.ok(dataDir, `serve names its data directory: ${stderr}`);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  const inFlight = [1, 2, 3].map((i) => fetchText(`${url}/statement?account=${i}`));
  // The 800 ms queries are running once the pool has a connection out for each.
  await waitUntil(async () => {
    const live = JSON.parse((await fetchText(`${url}/steps/live`)).text) as ServerLiveReport;
    return live.checkedOut === 3;
  }, 'the three queries running');
  child.kill('SIGTERM');
  const responses = await Promise.all(inFlight);
  assert.deepEqual(
    responses.map((r) => r.status),
    [200, 200, 200],
  );
  assert.equal(await exited, 0);
  assert.ok(await waitFor(() => processesMatching(dataDir).length === 0, 10_000), 'no postgres left');
  assert.equal(existsSync(dataDir), false);
  await assert.rejects(fetchText(`${url}/healthz`), 'the port is closed');
});
