// `plateau run --find`: a probe finds where the knee is, the study places its steps around
// it within the budget, runs its decisive steps again, and the record says how; the probe's
// edges (a service failing from the first request, Ctrl-C during it, --steps with --find).
// The reference service with a pool of 2 and 50 ms queries: a plateau near 2 ÷ 0.05 s = 40/s.
// test-run: load
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { AnalysisResult, ProbeReport, RunManifest } from '../contract/index.ts';
import { plateau } from './helpers/cli.ts';
import { findRealK6 } from './helpers/real-k6.ts';
import { newRunDirIn, reached, readManifest } from './helpers/run-dirs.ts';
import { TEST_PAYLOAD } from './helpers/small-study.ts';
import { startTestServer } from './helpers/test-server.ts';

const out = await mkdtemp(join(tmpdir(), 'plateau-find-'));
after(() => rm(out, { recursive: true, force: true }));

/** The reference service that plateaus near 40/s. */
const POOL_OF_TWO = ['--set', 'POOL_MAX=2', '--set', 'QUERY_MS=50', ...TEST_PAYLOAD];

/** A study's run directory, read back: its manifest, probe, analysis and record. */
async function readRun(dir: string) {
  const read = async <T>(name: string) => JSON.parse(await readFile(join(dir, name), 'utf8')) as T;
  return {
    manifest: await read<RunManifest>('run.json'),
    probe: await read<ProbeReport>('probe.json'),
    analysis: await read<AnalysisResult>('analysis.json'),
    record: await readFile(join(dir, 'record.txt'), 'utf8'),
  };
}

/** Asserts what every completed --find study of the pool of two shows. */
async function assertFound(dir: string, budgetSeconds: number) {
  const { manifest, probe, analysis, record } = await readRun(dir);
  // The probe doubled from 2/s and stopped once served fell below sent, past 40/s.
  assert.deepEqual(
    probe.steps.slice(0, 3).map((s) => s.step),
    ['p002', 'p004', 'p008'],
  );
  assert.equal(probe.stop.reason, 'knee', probe.stop.words);
  assert.ok(
    probe.plateauPerSec! > 30 && probe.plateauPerSec! < 46,
    `the probe's plateau ${probe.plateauPerSec}`,
  );
  assert.ok(
    existsSync(join(dir, 'probe.csv.gz')) && existsSync(join(dir, 'probe-summary.json')),
    'the probe is kept',
  );
  assert.ok(existsSync(join(dir, 'k6.csv.gz')), "the study's own client file");
  // The study's steps bracket the knee: below the plateau it found, and two or more past it.
  const plateauPerSec = analysis.verdict.plateau!.servedPerSec;
  assert.equal(analysis.verdict.firstLimit.resource, 'pool');
  assert.ok(plateauPerSec > 30 && plateauPerSec < 46, `plateau ${plateauPerSec}`);
  const firstPass = analysis.table.filter((r) => /^r\d+$/.test(r.step)).map((r) => r.offeredPerSec!);
  assert.ok(firstPass.filter((rate) => rate < plateauPerSec).length >= 3, `steps below: ${firstPass}`);
  assert.ok(firstPass.filter((rate) => rate > plateauPerSec * 1.1).length >= 2, `steps past: ${firstPass}`);
  assert.deepEqual(
    [...new Set(manifest.load.stepsPerSec)],
    firstPass,
    "run.json's steps are the placed ones and their repeats",
  );
  // The decisive steps ran again, later and not back to back, tagged r…b.
  assert.equal(manifest.find?.placedBy, 'probe');
  assert.equal(manifest.find?.budgetSeconds, budgetSeconds);
  const steps = analysis.table.map((r) => r.step);
  assert.equal(manifest.find?.repeated.length, 2, `repeated: ${manifest.find?.repeated}`);
  for (const tag of manifest.find!.repeated) {
    const first = steps.indexOf(tag);
    const again = steps.indexOf(`${tag}b`);
    assert.ok(
      first >= 0 && again > first + 1,
      `${tag}b runs later than ${tag}, not right after it: ${steps}`,
    );
  }
  assert.equal(
    analysis.verdict.repeats?.pairs.some((p) => p.step === analysis.verdict.plateau!.step),
    true,
  );
  // The record says how the steps were chosen, and gives the repeats' spread.
  assert.match(
    record,
    /^steps: {9}a probe \(p002–p\d{3}, 3 s each; stopped at p\d{3}, a step past where served first fell below sent \(p\d{3}: served [\d.]+\/s of \d+\/s sent.*\); served [\d.]+\/s of \d+\/s sent there\) placed [\d, ]+\/s around a knee near [\d.]+\/s: coarse below, fine across, two past; run again: r\d{3}b after r\d{3}b, r\d{3}b after r\d{3}$/m,
  );
  assert.match(
    record,
    /^repeats: {7}r\d{3} served .* at r\d{3}b .*noise [\d.]+% \(served against sent below the plateau, and across the steps past it\): plateau (held|UNSTABLE|not judged), safe limit (held|UNSTABLE|not judged)$/m,
  );
  assert.match(record, /^first limit: {3}pool[,;] /m);
  return { manifest, probe, analysis, record };
}

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

test('--find on real k6 places the same kind of steps', async (t) => {
  const k6 = findRealK6();
  if (typeof k6 === 'string') return t.skip(k6);
  const before = existsSync(out) ? readdirSync(out) : [];
  const result = await plateau([
    'run',
    '--find',
    '--budget',
    '80s',
    ...POOL_OF_TWO,
    '--engine',
    'k6',
    '--k6-bin',
    k6.bin,
    '-q',
    '--out',
    out,
  ]);
  assert.equal(result.code, 0, result.stderr);
  const { manifest } = await assertFound(await newRunDirIn(out, before), 80);
  assert.equal(manifest.engine.name, 'k6');
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
