// The verdict when a service refuses its excess, end to end: the real study (embedded
// PostgreSQL, the reference service, the embedded engine). The shedding run is then re-read with
// its clocks apart, gaps in its timeline, and --steady. test/queueing-verdict.test.ts has the
// service that queues instead, and jittered arrivals.
// test-run: load
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { analyzePath } from '../analysis/analyze-run.ts';
import type { AnalysisResult, ServerStepReport } from '../contract/index.ts';
import { runStudy, SMALL_STUDY } from './helpers/small-study.ts';

const out = await mkdtemp(join(tmpdir(), 'plateau-shedding-'));
after(() => rm(out, { recursive: true, force: true }));

let sheddingRun: (AnalysisResult & { runDir: string }) | undefined;

test('shedding: the same pool is named and excess is refused, with the backlog gone within seconds of the ramp', async () => {
  const { analysis } = await runStudy(out, [...SMALL_STUDY, '--recovery', '10', '--recovery-rate', '20']);
  sheddingRun = analysis;
  const v = analysis.verdict;
  assert.equal(v.firstLimit.resource, 'pool', JSON.stringify(v, null, 1));
  assert.match(v.overload, /^503 \+ Retry-After/);
  assert.equal(v.backlog, null, 'refused, not queued');
  // The wait queue is capped at 8: it is back under one waiting within 3 s of the drop.
  const server = JSON.parse(await readFile(join(analysis.runDir, 'server.json'), 'utf8')) as {
    timeline: { step: string | null; waitingMean: number }[];
  };
  const after = server.timeline.filter((p) => p.step === 'drain' || p.step === 'recovery');
  assert.ok(
    after.slice(3).every((p) => p.waitingMean < 1),
    JSON.stringify(after.slice(0, 6)),
  );
  // And the record says so: queue back to its own level and client p95 under the objective.
  // (It read "never recovered" while the progress poll stalled the service's event loop.)
  assert.ok(v.recovery.seconds !== null && v.recovery.seconds <= 5, v.recovery.summary);
});

/** A copy of a run directory with its server.json changed by `edit`. */
async function withServer(
  runDir: string,
  name: string,
  edit: (r: ServerStepReport) => void,
): Promise<string> {
  const copy = join(out, name);
  await cp(runDir, copy, { recursive: true });
  const report = JSON.parse(await readFile(join(copy, 'server.json'), 'utf8')) as ServerStepReport;
  edit(report);
  await writeFile(join(copy, 'server.json'), JSON.stringify(report));
  return copy;
}

test('the shedding run re-read: clocks 7 s apart, a timeline with gaps, and --steady each say so and keep the verdict', async (t) => {
  if (!sheddingRun) return t.skip('needs the shedding study above');
  const base = sheddingRun;
  const skewed = await withServer(base.runDir, 'skewed', (r) => {
    r.startedMs += 7000;
    r.generatedMs += 7000;
    for (const b of r.steps) {
      b.firstRequestMs += 7000;
      b.lastRequestMs += 7000;
    }
    for (const p of r.timeline) p.t += 7;
  });
  const s = (await analyzePath(skewed)).analysis;
  assert.match(s.verdict.notes.join('\n'), /clocks differ by about 7 s/);
  assert.equal(s.verdict.firstLimit.resource, 'pool');
  assert.equal(
    s.verdict.plateau?.servedPerSec,
    base.verdict.plateau?.servedPerSec,
    'server figures unchanged',
  );
  assert.equal(
    s.verdict.recovery.seconds,
    base.verdict.recovery.seconds,
    'recovery read on matching seconds',
  );

  const gappy = await withServer(base.runDir, 'gappy', (r) => {
    const after = r.timeline.filter((p) => p.step === 'drain' || p.step === 'recovery');
    const drop = new Set(after.slice(2, 4).map((p) => p.t));
    r.timeline = r.timeline.filter((p) => !drop.has(p.t));
  });
  const g = (await analyzePath(gappy)).analysis;
  assert.match(g.verdict.notes.join('\n'), /timeline has gaps after the ramp .*recovery is approximate/);
  assert.equal(g.verdict.firstLimit.resource, 'pool');

  const steady = (await analyzePath(base.runDir, { steady: true })).analysis;
  const first = steady.table.find((r) => r.step === 'r040')!;
  const whole = base.table.find((r) => r.step === 'r040')!;
  // A 3 s hold with a 1 s ramp: the two steady seconds carry the full 40/s.
  assert.ok(
    first.sentPerSec > whole.sentPerSec && first.sentPerSec >= 38,
    `${first.sentPerSec} vs ${whole.sentPerSec}`,
  );
  assert.ok(first.servedPerSec >= 0.85 * first.sentPerSec, `served ${first.servedPerSec}`);
  assert.equal(first.servedBasis, 'window');
  assert.match(steady.verdict.notes.join('\n'), /leave out the first 1 s/);
  assert.equal(steady.verdict.firstLimit.resource, 'pool');
});
