// The verdict when a service queues instead of refusing, and with jittered arrivals, end to end
// and small enough to check by hand: the real study (embedded PostgreSQL, the reference
// service, the embedded engine). test/shedding-verdict.test.ts has the refusing service.
// test-run: solo
// Solo: its unbounded-queue study keeps ~360 requests in flight on hundreds of VUs, and beside
// the other studies its generator fell ~176 ms behind on the saturated machine (two fresh-clone
// runs), which the verdict rightly names instead of the pool. The jittered study beside them
// saw its pool 90 % checked out, not full, and named no listed resource (one fresh-clone run).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { AnalysisResult } from '../contract/index.ts';
import { runStudy, SMALL_STUDY } from './helpers/small-study.ts';

const out = await mkdtemp(join(tmpdir(), 'plateau-queueing-'));
after(() => rm(out, { recursive: true, force: true }));

const rateRows = (a: AnalysisResult) => a.table.filter((r) => r.offeredPerSec !== null);

// POOL_MAX=2 and a 20 ms query hold a connection ~25 ms: a ceiling near 2 ÷ 0.025 s = 80/s
// (less while the loop is busy). Past it, SHED=off queues: 120/s and 160/s for 3 s each
// leave a backlog of about (120 − 80)·3 + (160 − 80)·3 = 360, which drains at 80 − 20 = 60/s.
test('an unbounded queue: served stops following sent, the pool is named, and the backlog and its drain are reported', async () => {
  const { analysis, manifest } = await runStudy(out, [
    ...SMALL_STUDY,
    '--set',
    'SHED=off',
    '--recovery',
    '12',
    '--recovery-rate',
    '20',
  ]);
  const v = analysis.verdict;
  const rows = rateRows(analysis);
  assert.equal(v.firstLimit.resource, 'pool', JSON.stringify(v, null, 1));
  const served = v.plateau?.servedPerSec ?? 0;
  assert.ok(served >= 40 && served <= 100, `plateau ${served}/s`);
  // Served by window, not by tag: the top step was sent ~150/s but served at the plateau.
  const top = rows.at(-1)!;
  assert.equal(top.servedBasis, 'window');
  assert.ok(top.servedPerSec < 0.8 * top.sentPerSec, `${top.servedPerSec} served of ${top.sentPerSec} sent`);
  assert.ok(
    (top.completedByTagPerSec ?? 0) > top.servedPerSec,
    'every request sent at the top step completed eventually: by tag it would look served',
  );
  assert.equal(top.failures.shed + top.failures.timeouts + top.failures.serverErrors, 0, 'nothing refused');
  assert.match(v.overload, /^zero errors because nothing was allowed to fail/);
  assert.ok((v.backlog?.queuedAtRampEnd ?? 0) > 50, `backlog ${JSON.stringify(v.backlog)}`);
  assert.ok((v.backlog?.waitP95Ms ?? 0) > 1000, 'requests sent at the top waited seconds');
  assert.ok(
    v.backlog?.drainSeconds !== null && (v.backlog?.drainSeconds ?? 99) < 12,
    JSON.stringify(v.backlog),
  );
  // The generator delivered every planned start: sized for the backlog, or rerun until it was.
  assert.equal(
    analysis.table.reduce((sum, r) => sum + r.dropped, 0),
    0,
    `drops; vus ${JSON.stringify(manifest.load.vus)}`,
  );
  assert.ok((manifest.load.vus?.preAllocatedVUs ?? 0) > 100, JSON.stringify(manifest.load.vus));
  // The database's own time stays flat while the service's view of the query may not.
  const first = rows[0]!.server!;
  assert.ok(first.databaseP95Ms !== null && top.server!.databaseP95Ms !== null);
  assert.ok(top.server!.databaseP95Ms! < 1.5 * first.databaseP95Ms!, 'the database did not slow down');
});

test('jittered arrivals: the pool is still named (enough VUs for the sleeps), never the generator', async () => {
  const { analysis, manifest } = await runStudy(out, [
    ...SMALL_STUDY,
    '--recovery',
    '4',
    '--recovery-rate',
    '20',
    '--jitter',
    '1',
  ]);
  assert.equal(analysis.verdict.firstLimit.resource, 'pool', JSON.stringify(analysis.verdict, null, 1));
  assert.equal(
    analysis.table.reduce((sum, r) => sum + r.dropped, 0),
    0,
  );
  assert.match(manifest.load.vus?.basis ?? '', /jitter 1 s/);
});
