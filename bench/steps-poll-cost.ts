// Benchmark: what reading the service's figures during a run costs the service measured.
//
// One reference service with SHED=off (a queue that never refuses) against one embedded
// PostgreSQL, offered a constant rate above its pool's ceiling for each round, while a
// poller reads, once a second, the whole `GET /steps` report, `GET /steps/live`, what
// `plateau run`'s progress line reads (`GET /steps/live` plus the engine's REST API:
// /v1/status, /v1/metrics/http_reqs, /v1/metrics/dropped_iterations), or nothing.
// Rounds alternate, and the queue is let drain between them. Measured from the service's own
// figures: served per second (its timeline, after the round's first 5 s) and the query p95
// it saw (its bucket), which would stay at the database's ~50 ms if reading cost nothing.
//
//   npm run bench:steps-poll -- [rate=90] [roundSeconds=20] [rounds=1]
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import type { ServerLiveReport, ServerStepReport } from '../contract/index.ts';
import { engineNodeFlags } from '../engine/node-flags.ts';
import { buildK6Scripts } from '../harness/build-scripts.ts';
import { openDatabase } from '../harness/db/database.ts';
import { startReferenceService } from './lib/reference-service.ts';

const [rate = 90, roundSeconds = 20, rounds = 1] = process.argv.slice(2).map(Number);
const bin = fileURLToPath(new URL('../bin/plateau.js', import.meta.url));
const MODES = ['steps', 'live', 'progress', 'none'] as const;
const POLL_NAMES = {
  steps: 'GET /steps',
  live: 'GET /steps/live',
  progress: 'GET /steps/live + engine /v1/status, /v1/metrics/{http_reqs,dropped_iterations}',
  none: 'none',
} as const;

/** A loopback port free now, for the engine's --address. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

const getJson = async <T>(url: string, method = 'GET'): Promise<T> => {
  const res = await request(url, { method });
  return (await res.body.json()) as T;
};

const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL });
const { child: service, url } = await startReferenceService(db.url, { SHED: 'off' });
const [script] = await buildK6Scripts({
  entries: [fileURLToPath(new URL('../scripts/constant-rate.ts', import.meta.url))],
});

const results: Record<string, unknown>[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    for (const mode of MODES) {
      await getJson(`${url}/steps/reset`, 'POST');
      const port = await freePort();
      const engineApi = `http://127.0.0.1:${port}`;
      const reads: Record<(typeof MODES)[number], string[]> = {
        steps: [`${url}/steps`],
        live: [`${url}/steps/live`],
        progress: [
          `${url}/steps/live`,
          `${engineApi}/v1/status`,
          `${engineApi}/v1/metrics/http_reqs`,
          `${engineApi}/v1/metrics/dropped_iterations`,
        ],
        none: [],
      };
      const poll =
        mode === 'none'
          ? undefined
          : setInterval(() => {
              for (const read of reads[mode]) void getJson(read).catch(() => undefined);
            }, 1000);
      const engine = spawn(
        process.execPath,
        [
          ...engineNodeFlags(),
          bin,
          'engine',
          'run',
          script!.outFile,
          '-q',
          '--no-summary',
          '--address',
          `127.0.0.1:${port}`,
          ...['-e', `BASE_URL=${url}`, '-e', `RATE=${rate}`, '-e', `DURATION=${roundSeconds}s`],
          ...['-e', `PREALLOCATED_VUS=${rate * roundSeconds}`, '-e', `MAX_VUS=${rate * roundSeconds}`],
        ],
        { stdio: 'ignore' },
      );
      await new Promise((resolve) => engine.on('exit', resolve));
      if (poll) clearInterval(poll);
      const report = await getJson<ServerStepReport>(`${url}/steps`);
      const seconds = report.timeline.slice(5, roundSeconds);
      // The round's requests: the busiest bucket (the script's step tag, or `untagged`).
      const bucket = [...report.steps].sort((a, b) => b.requests - a.requests)[0];
      results.push({
        poll: POLL_NAMES[mode],
        rate,
        servedPerSec:
          Math.round((seconds.reduce((a, p) => a + p.served, 0) / Math.max(1, seconds.length)) * 10) / 10,
        queryP95Ms: bucket?.queryMs.p95,
        databaseP95Ms: bucket?.databaseMs?.p95,
        loopDelayMaxMs: bucket?.process.loopDelayMs?.max ?? null,
      });
      process.stderr.write(`${JSON.stringify(results.at(-1))}\n`);
      // Let the queue drain before the next round.
      for (let i = 0; i < 120; i++) {
        const live = await getJson<ServerLiveReport>(`${url}/steps/live`);
        if (live.waiting === 0 && live.checkedOut === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }
  process.stdout.write(
    `${JSON.stringify({ rate, roundSeconds, node: process.version, results }, null, 2)}\n`,
  );
} finally {
  service.kill('SIGTERM');
  await new Promise((resolve) => service.on('exit', resolve));
  await db.stop();
}
