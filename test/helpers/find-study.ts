// What every completed `plateau run --find` study of the pool of two shows, shared by the
// engine's and real k6's test files (each its own file, so the two studies run side by side).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AnalysisResult, ProbeReport, RunManifest } from '../../contract/index.ts';
import { TEST_PAYLOAD } from './small-study.ts';

/** The reference service that plateaus near 40/s. */
export const POOL_OF_TWO = ['--set', 'POOL_MAX=2', '--set', 'QUERY_MS=50', ...TEST_PAYLOAD];

/** A study's run directory, read back: its manifest, probe, analysis and record. */
export async function readRun(dir: string) {
  const read = async <T>(name: string) => JSON.parse(await readFile(join(dir, name), 'utf8')) as T;
  return {
    manifest: await read<RunManifest>('run.json'),
    probe: await read<ProbeReport>('probe.json'),
    analysis: await read<AnalysisResult>('analysis.json'),
    record: await readFile(join(dir, 'record.txt'), 'utf8'),
  };
}

/** The probe's steps in a line, for a failure's message. */
function probeSteps(probe: ProbeReport): string {
  return probe.steps
    .map(
      (s) =>
        `${s.step} sent ${s.sentPerSec} served ${s.servedPerSec} p95 ${s.p95Ms} ms gen ${s.generatorCpuPct}% [${s.signs.map((x) => x.kind).join(',')}]`,
    )
    .join('; ');
}

/** Asserts what every completed --find study of the pool of two shows. */
export async function assertFound(dir: string, budgetSeconds: number) {
  const { manifest, probe, analysis, record } = await readRun(dir);
  // The probe doubled from 2/s and stopped once served fell below sent, past 40/s.
  assert.deepEqual(
    probe.steps.slice(0, 3).map((s) => s.step),
    ['p002', 'p004', 'p008'],
  );
  assert.equal(probe.stop.reason, 'knee', probe.stop.words);
  assert.ok(
    probe.plateauPerSec! > 30 && probe.plateauPerSec! < 46,
    `the probe's plateau ${probe.plateauPerSec}: ${probe.stop.words}; ${probeSteps(probe)}`,
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
  // The probe predicts the plateau's step; on a machine whose CPU is saturated (a CI run of
  // the whole suite) the service can serve less or more in the study than in the probe, and
  // its plateau land a step away from the prediction. Then the record must not call it held.
  const plateauStep = analysis.verdict.plateau!.step;
  if (!analysis.verdict.repeats?.pairs.some((p) => p.step === plateauStep)) {
    assert.equal(analysis.verdict.repeats?.plateau.stable, null, record);
    assert.match(analysis.verdict.repeats!.plateau.words, /^the plateau's step r\d+ was not repeated$/);
  }
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
