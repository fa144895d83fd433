// `plateau run --find`: a probe finds where the knee is, the study places its steps around
// it within the budget, runs its decisive steps again, and the record says how; the probe's
// edges (a service failing from the first request, Ctrl-C during it, --steps with --find).
// The reference service with a pool of 2 and 50 ms queries: a plateau near 2 ÷ 0.05 s = 40/s.
// test-run: load
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { plateau } from './helpers/cli.ts';
import { assertFound, POOL_OF_TWO, readRun } from './helpers/find-study.ts';
import { newRunDirIn, reached, readManifest } from './helpers/run-dirs.ts';
import { startTestServer } from './helpers/test-server.ts';

const out = await mkdtemp(join(tmpdir(), 'plateau-find-'));
after(() => rm(out, { recursive: true, force: true }));

test('--find probes for the knee, places the steps around it within the budget, and runs the decisive ones again', async () => {
  const before = existsSync(out) ? readdirSync(out) : [];
  const started = Date.now();
  const result = await plateau(['run', '--find', '--budget', '90s', ...POOL_OF_TWO, '--out', out]);
  const seconds = (Date.now() - started) / 1000;
  assert.equal(result.code, 0, result.stderr);
  const dir = await newRunDirIn(out, before);
  const { analysis } = await assertFound(dir, 90);
  // Within its budget, with the start of the database and service and the analysis around it.
  assert.ok(seconds < 90 + 40, `the study took ${seconds} s`);
  // The safe limit stands below the plateau, never at it.
  const safe = analysis.verdict.safeLimit;
  if (safe.ratePerSec !== null) assert.ok(safe.ratePerSec < analysis.verdict.plateau!.servedPerSec);
  assert.match(
    result.stderr,
    /^probe: the rate doubles from 2\/s every 3 s until the first sign of the knee; probe and study within 90s$/m,
  );
  assert.match(result.stderr, /^steps: a probe \(p002/m);
  assert.match(result.stdout, /^r\d{3}b /m, 'the table shows each repeat');
});

test('Ctrl-C during the probe: the probe is kept and analysed as far as it went (exit 105)', async () => {
  const before = existsSync(out) ? readdirSync(out) : [];
  let dir: Promise<string> | undefined;
  const result = await plateau(['run', '--find', '--budget', '90s', ...POOL_OF_TWO, '-q', '--out', out], {
    onStart: (child) => {
      dir = (async () => {
        const found = await newRunDirIn(out, before);
        // Well into the probe: the last second, left out of an interrupted run's analysis,
        // then holds p016's first requests and p008's last, not p004's.
        await reached(found, 'p016');
        child.kill('SIGINT');
        return found;
      })();
      dir.catch(() => undefined);
    },
  });
  assert.equal(result.code, 105, result.stderr);
  const { manifest, probe, analysis, record } = await readRun(await dir!);
  assert.equal(manifest.status, 'interrupted');
  assert.equal(probe.stop.reason, 'interrupted');
  assert.deepEqual(manifest.load.stepsPerSec.slice(0, 3), [2, 4, 8], "run.json's plan is the probe's");
  // The probe's own steps are the run's rows: p002 and p004 stand.
  const rows = analysis.table.filter((r) => r.step.startsWith('p'));
  assert.deepEqual(
    rows.slice(0, 2).map((r) => [r.step, r.invalid]),
    [
      ['p002', null],
      ['p004', null],
    ],
  );
  assert.match(
    record,
    /^run: {11}did not complete: stopped by SIGINT during p0(16|32); rows p002–p0(04|08|16) stand$/m,
  );
});

test('a service failing from the first request, and --steps with --find, are named', async () => {
  const failing = await startTestServer({ status: 500 });
  const before = existsSync(out) ? readdirSync(out) : [];
  // Your own target and no steps: the probe runs by default, and stops at its first step.
  const result = await plateau(['run', '--target', failing.url, '--budget', '60s', '-q', '--out', out]);
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    /plateau: the probe could not place the steps: the service failed from the first request: 100% of p002's requests at 2\/s failed/,
  );
  assert.match(
    result.stderr,
    /hint: see service.log and http:\/\/127.0.0.1:\d+: a service that fails every request has no capacity to find/,
  );
  const dir = await newRunDirIn(out, before);
  const manifest = readManifest(dir);
  assert.equal(manifest.status, 'failed');
  assert.equal(manifest.find?.probe.stop, 'failing');
  assert.ok(existsSync(join(dir, 'record.txt')), 'the probe is analysed as the run');
  assert.ok(failing.requests.length < 20, `the probe stopped early: ${failing.requests.length} requests`);

  const both = await plateau(['run', '--find', '--steps', '20,40', '--out', out]);
  assert.equal(both.code, 104);
  assert.match(both.stderr, /--find: cannot be given with --steps/);
});
