// `plateau engine run --workers N`: N engine processes on segments, presented as one test.
// test-run: load
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readdir, readFile, symlink } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { analyzePath } from '../analysis/analyze-run.ts';
import { EXIT_CODES } from '../contract/index.ts';
import { freeLoopbackPort } from '../harness/study/load-api.ts';
import { childPids } from '../lib/proc-stat.ts';
import { plateau } from './helpers/cli.ts';
import { writeScript } from './helpers/engine.ts';
import { processesMatching } from './helpers/processes.ts';
import { startTestServer, type TestServer } from './helpers/test-server.ts';

/**
 * A server that fails every odd iteration: with two workers on k6's striped segments, worker 1
 * runs exactly the odd ones, so it alone fails all its requests and the test half of them.
 */
function halfFailingServer(): Promise<TestServer> {
  return startTestServer({
    handle: (req, res) => {
      const it = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('it'));
      res.writeHead(Number.isFinite(it) && it % 2 === 1 ? 503 : 200, { 'content-type': 'text/plain' });
      res.end('ok');
    },
  });
}

const script = (url: string, scenario: string, thresholds: string) => `
import http from 'k6/http';
import exec from 'k6/execution';
import { check } from 'k6';
export const options = {
  scenarios: { load: { executor: 'constant-arrival-rate', ${scenario}, preAllocatedVUs: 40 } },
  thresholds: ${thresholds},
};
export function setup() { return { token: http.get('${url}/setup').body }; }
export default function (data) {
  const res = http.get('${url}/?it=' + exec.scenario.iterationInTest + '&t=' + data.token);
  check(res, { 'status 200': (r) => r.status === 200 });
}
export function teardown() { http.get('${url}/teardown'); }`;

/** Calls `then` once the server has seen `count` requests (the load is under way). */
function once(server: TestServer, count: number, then: () => void): (child: ChildProcess) => void {
  return () => {
    const poll = setInterval(() => {
      if (server.requests.length < count) return;
      clearInterval(poll);
      then();
    }, 20);
  };
}

/** The engine processes under the process the test started: its coordinator's workers. */
function workersOf(cli: ChildProcess): number[] {
  return childPids(cli.pid!).flatMap((coordinator) => childPids(coordinator));
}

async function csvRows(path: string): Promise<string[]> {
  return gunzipSync(await readFile(path))
    .toString()
    .trim()
    .split('\n');
}

test('two workers run one test: setup and teardown once, every iteration once, thresholds over both, one CSV and one summary', async () => {
  const server = await halfFailingServer();
  const path = await writeScript(
    script(
      server.url,
      "rate: 100, duration: '1950ms'",
      "{ http_req_failed: ['rate<0.6'], checks: ['rate>0.4'] }",
    ),
  );
  const csv = `${dirname(path)}/k6.csv.gz`;
  const exported = `${dirname(path)}/summary.json`;
  const run = await plateau([
    'engine',
    'run',
    path,
    '--workers',
    '2',
    '--out',
    `csv=${csv}`,
    '--summary-export',
    exported,
  ]);
  assert.equal(run.code, 0, run.stderr);
  const iterations = server.requests
    .map((r) => new URL(r.url, 'http://x').searchParams)
    .filter((p) => p.has('it'));
  // 100/s for 1.95 s: starts at 0, 10, …, 1940 ms.
  assert.deepEqual(
    iterations.map((p) => Number(p.get('it'))).sort((a, b) => a - b),
    Array.from({ length: 195 }, (_, i) => i),
    'every iteration of the unsplit test exactly once',
  );
  assert.ok(
    iterations.every((p) => p.get('t') === 'ok'),
    'every worker got setup()’s data',
  );
  assert.equal(server.requests.filter((r) => r.url === '/setup').length, 1, 'setup() ran once');
  assert.equal(server.requests.filter((r) => r.url === '/teardown').length, 1, 'teardown() ran once');

  // Worker 2 failed every request of its own: judged alone it crosses rate<0.6; over the test it does not.
  const summary = JSON.parse(await readFile(exported, 'utf8'));
  assert.equal(summary.metrics.http_reqs.count, 195 + 2, 'the iterations and setup and teardown');
  assert.ok(Math.abs(summary.metrics.http_req_failed.value - 97 / 197) < 1e-9);
  assert.deepEqual(summary.metrics.http_req_failed.thresholds, { 'rate<0.6': false });
  assert.deepEqual(
    [summary.root_group.checks['status 200'].passes, summary.root_group.checks['status 200'].fails],
    [98, 97],
  );
  assert.equal(run.stdout.match(/TOTAL RESULTS/g)?.length, 1, 'one text summary');

  const rows = await csvRows(csv);
  assert.equal(rows.filter((r) => r.startsWith('metric_name,')).length, 1, 'one header');
  assert.equal(rows.filter((r) => r.startsWith('http_reqs,')).length, 197);
  assert.deepEqual(await readdir(dirname(csv)), ['k6.csv.gz', 'script.js', 'summary.json'], 'no parts left');
  const analysis = await analyzePath(csv);
  assert.equal(
    analysis.analysis.table.reduce((sum, row) => sum + row.requests, 0),
    195 + 2,
  );
});

test('abortOnFail is judged over every worker’s metrics, and the REST API answers for the whole test', async () => {
  const server = await halfFailingServer();
  const path = await writeScript(
    script(
      server.url,
      "rate: 50, duration: '60s'",
      "{ http_req_failed: [{ threshold: 'rate<0.4', abortOnFail: true }] }",
    ),
  );
  const exported = `${dirname(path)}/summary.json`;
  const port = await freeLoopbackPort();
  let live: { count: number; served: number } | undefined;
  const started = Date.now();
  const run = await plateau(
    [
      'engine',
      'run',
      path,
      '--workers',
      '2',
      '--summary-export',
      exported,
      '--address',
      `127.0.0.1:${port}`,
      '-q',
    ],
    {
      onStart: once(server, 30, () => {
        void request(`http://127.0.0.1:${port}/v1/metrics/http_reqs`)
          .then((res) => res.body.json())
          .then((body) => {
            const count = (body as { data: { attributes: { sample: { count: number } } } }).data.attributes
              .sample.count;
            live = { count, served: server.requests.length };
          });
      }),
    },
  );
  assert.equal(run.code, 99, run.stderr);
  assert.match(run.stderr, /threshold rate<0.4 on http_req_failed crossed/);
  assert.ok(Date.now() - started < 30_000, 'aborted long before its 60 s');
  const summary = JSON.parse(await readFile(exported, 'utf8'));
  assert.deepEqual(summary.metrics.http_req_failed.thresholds, { 'rate<0.4': true });
  assert.ok(live, 'the REST API answered');
  assert.ok(
    live.count > 0 && live.count <= live.served,
    `merged count ${live.count} of ${live.served} served`,
  );
});

test('a worker killed mid-test fails the test naming it; the other’s data are kept and the output reads whole', async () => {
  const server = await startTestServer();
  const path = await writeScript(script(server.url, "rate: 50, duration: '60s'", '{}'));
  const csv = `${dirname(path)}/k6.csv.gz`;
  const exported = `${dirname(path)}/summary.json`;
  let cli: ChildProcess | undefined;
  let killed: number | undefined;
  const run = await plateau(
    ['engine', 'run', path, '--workers', '2', '--out', `csv=${csv}`, '--summary-export', exported],
    {
      onStart: (child) => {
        cli = child;
        once(server, 40, () => {
          killed = workersOf(child).at(-1);
          process.kill(killed!, 'SIGKILL');
        })(child);
      },
    },
  );
  assert.equal(run.code, 122, run.stderr);
  assert.match(run.stderr, /engine worker 2 of 2 \(segment 1\/2:1, pid \d+\) was killed by SIGKILL/);
  assert.ok(killed !== undefined && cli !== undefined);
  const analysis = await analyzePath(csv);
  const requests = analysis.analysis.table.reduce((sum, row) => sum + row.requests, 0);
  assert.ok(requests >= 20, `the CSV reads back: ${requests} requests`);
  // The striped segments give worker 1 the even iterations. The summary holds all of its
  // requests and the killed worker's up to that worker's last snapshot (every 250 ms), which
  // may be fewer than the rows its CSV part got before the kill: so not the CSV's count.
  const survivor = (await csvRows(csv)).filter(
    (row) => row.startsWith('http_reqs,') && /[?&]it=\d*[02468]&/.test(row),
  ).length;
  const summary = JSON.parse(await readFile(exported, 'utf8'));
  assert.ok(
    summary.metrics.http_reqs.count > survivor && survivor >= 10,
    `the summary holds the killed worker’s share up to its last snapshot: ${summary.metrics.http_reqs.count} requests, ${survivor} of them the other worker's`,
  );
  assert.deepEqual(await readdir(dirname(csv)), ['k6.csv.gz', 'script.js', 'summary.json']);
  assert.deepEqual(processesMatching('engine worker'), [], 'no worker left running');
});

test('SIGINT ends every worker with its data kept: 105, the CSV and the summary agree', async () => {
  const server = await startTestServer();
  const path = await writeScript(script(server.url, "rate: 50, duration: '60s'", '{}'));
  const csv = `${dirname(path)}/k6.csv.gz`;
  const exported = `${dirname(path)}/summary.json`;
  const run = await plateau(
    ['engine', 'run', path, '--workers', '2', '--out', `csv=${csv}`, '--summary-export', exported],
    {
      onStart: (child) => once(server, 40, () => child.kill('SIGINT'))(child),
    },
  );
  assert.equal(run.code, 105, run.stderr);
  const summary = JSON.parse(await readFile(exported, 'utf8'));
  const requests = (await csvRows(csv)).filter((r) => r.startsWith('http_reqs,')).length;
  assert.ok(requests >= 40);
  assert.equal(summary.metrics.http_reqs.count, requests, 'every request in both');
  assert.equal(
    server.requests.filter((r) => r.url === '/teardown').length,
    0,
    'no teardown after a signal, as k6',
  );
});

test('an output that cannot be written stops every worker: 124 naming it, none left running', {
  // A regression here hangs (a worker that missed the stop waits for a start that never
  // comes): fail instead.
  timeout: 60_000,
}, async () => {
  const server = await startTestServer();
  const path = await writeScript(script(server.url, "rate: 50, duration: '60s'", '{}'));
  // Worker 1 writes the file named, here the device that answers every write with ENOSPC;
  // worker 2 writes its part beside it. The failure comes as worker 1 opens its output,
  // while worker 2 is starting: the stop must reach a worker that has only just begun.
  const csv = `${dirname(path)}/k6.csv`;
  await symlink('/dev/full', csv);
  const run = await plateau(['engine', 'run', path, '--workers', '2', '--out', `csv=${csv}`]);
  assert.equal(run.code, EXIT_CODES.outputFailed, run.stderr);
  assert.match(
    run.stderr,
    /the CSV output \S+k6\.csv cannot be written: no space left on the disk \(ENOSPC\)/,
  );
  assert.deepEqual(processesMatching('engine worker'), [], 'no worker left running');
});

test('bad --workers values exit 104 naming the problem and the fix', async () => {
  const path = await writeScript('export default function () {}');
  const cores = availableParallelism();
  const cases: [args: string[], expected: RegExp][] = [
    [['--workers', '0'], /0 workers would run no engine at all.*give 1 to/s],
    [['--workers', String(cores + 1)], new RegExp(`${cores + 1} workers are more than the ${cores} core`)],
    [['--workers', '2', '--execution-segment', '0:1/2'], /cannot be given with --execution-segment/],
    [['--workers', 'lots'], /"lots" is not a number of workers/],
  ];
  const runs = await Promise.all(cases.map(([args]) => plateau(['engine', 'run', path, ...args])));
  for (const [i, run] of runs.entries()) {
    assert.equal(run.code, 104, run.stderr);
    assert.match(run.stderr, cases[i]![1]);
  }
});

test('plateau run --workers 2: the study’s load on two workers, one client file, each worker’s CPU in generator.json', async () => {
  const server = await startTestServer();
  const out = dirname(await writeScript(''));
  const run = await plateau([
    'run',
    ...['--target', server.url, '--steps', '10,20', '--hold', '2', '--ramp', '1', '--recovery', '2'],
    ...['--workers', '2', '--out', out, '--json'],
  ]);
  assert.equal(run.code, 0, run.stderr);
  const { runDir, table } = JSON.parse(run.stdout) as {
    runDir: string;
    table: { step: string; requests: number }[];
  };
  const manifest = JSON.parse(await readFile(`${runDir}/run.json`, 'utf8'));
  assert.deepEqual(manifest.engine, { name: 'embedded', version: 'plateau-embedded', workers: 2 });
  assert.deepEqual(manifest.config['--workers'], { value: 2, source: 'flag' });
  const generator = JSON.parse(await readFile(`${runDir}/generator.json`, 'utf8'));
  assert.equal(generator.workers, 2);
  const seen = generator.seconds.filter((s: { workers?: number[] }) => s.workers?.length === 2);
  assert.ok(seen.length >= 3, JSON.stringify(generator.seconds));
  for (const s of seen) assert.equal(s.usablePct, Math.max(...s.workers), 'the busiest worker');
  assert.ok(table.find((r) => r.step === 'r020')!.requests >= 30, JSON.stringify(table));
  const files = await readdir(runDir);
  assert.ok(files.includes('k6.csv.gz'));
  assert.deepEqual(
    files.filter((f) => f.includes('.part')),
    [],
    'the workers’ parts joined',
  );
});

test('plateau check --workers 2: the check’s constant rate on two workers, its thresholds over both; bad values exit 104', async () => {
  const server = await startTestServer();
  const out = dirname(await writeScript(''));
  // Both workers are seen running: a process poll every 50 ms across a 4 s check.
  let most = 0;
  const poll = setInterval(() => {
    most = Math.max(most, processesMatching('engine worker').length);
  }, 50);
  const run = await plateau([
    'check',
    '--target',
    server.url,
    '--rate',
    '20',
    '--duration',
    '4',
    '--workers',
    '2',
    '--out',
    out,
    '--json',
  ]).finally(() => clearInterval(poll));
  assert.equal(run.code, 0, run.stderr);
  assert.equal(most, 2, 'two engine workers ran the check');
  const result = JSON.parse(run.stdout) as { runDir: string; thresholds: { failed: boolean }[] };
  assert.ok(result.thresholds.length > 0 && result.thresholds.every((t) => !t.failed), run.stdout);
  const summary = JSON.parse(await readFile(`${result.runDir}/summary.json`, 'utf8'));
  assert.equal(summary.metrics.http_reqs.count, 80, 'every start of 20/s for 4 s, once, over both workers');
  assert.deepEqual(
    (await readdir(result.runDir)).filter((f) => f.includes('.part')),
    [],
    'the workers’ parts joined',
  );
  assert.deepEqual(processesMatching('engine worker'), [], 'no worker left running');

  const bad: [args: string[], expected: RegExp][] = [
    [['--workers', '0'], /0 workers would run no engine at all/],
    [['--workers', '2', '--engine', 'k6'], /--workers.*real k6 uses every core by itself/s],
  ];
  const refused = await Promise.all(
    bad.map(([args]) => plateau(['check', '--target', server.url, '--rate', '20', '--out', out, ...args])),
  );
  for (const [i, r] of refused.entries()) {
    assert.equal(r.code, 104, r.stderr);
    assert.match(r.stderr, bad[i]![1]);
  }
});
