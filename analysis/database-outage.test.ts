import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SaturationRow, ServiceSettings, TimelinePoint } from '../contract/index.ts';
import {
  databaseOutageNotes,
  databaseOutageReason,
  databaseOutagesOf,
  isDatabaseOutageRow,
} from './database-outage.ts';
import { recordFields, renderTableMarkdown, renderTableText } from './render.ts';
import { loadTemplates } from './templates.ts';
import { decideVerdict, type VerdictInputs } from './verdict.ts';

const SETTINGS: ServiceSettings = { poolMax: 2, queueMax: 8, acquireTimeoutMs: 200, shed: true, extra: {} };

/** A rate step whose service was away `downMs` of it, having refused `refused` requests. */
function row(offered: number, served: number, downMs = 0, refused = 0): SaturationRow {
  return {
    step: `r${String(offered).padStart(3, '0')}`,
    offeredPerSec: offered,
    sentPerSec: offered,
    servedPerSec: served,
    servedSource: 'server',
    seconds: 3,
    requests: offered * 3,
    latencyMs: { med: 25, p95: 30, p99: 40, max: 60 },
    failures: {
      shed: refused,
      rateLimited: 0,
      serverErrors: 0,
      clientErrors: 0,
      timeouts: 0,
      networkErrors: 0,
    },
    failureRate: refused / (offered * 3),
    dropped: 0,
    generator: { lagMsMax: 2, cpuPctMax: 20 },
    server: {
      // While the database is away nothing holds a connection: the pool looks idle.
      checkedOutPct: downMs > 0 ? 5 : 30,
      eventLoopUtilization: 0.2,
      waitingMean: 0,
      waitingMax: 0,
      waitP95Ms: 0.3,
      queryP95Ms: 21,
      cpuPct: 20,
      unavailable: { database: refused },
      databaseDownMs: downMs,
    },
    invalid: downMs > 0 ? databaseOutageReason(downMs, refused) : null,
  };
}

/** One second of the service's timeline. */
function second(t: number, step: string, databaseDownMs: number, unavailable = 0): TimelinePoint {
  return {
    t,
    step,
    served: 0,
    shed: 0,
    checkedOutMean: 0,
    waitingMean: 0,
    waitingMax: 0,
    cpuPct: 10,
    databaseDownMs,
    unavailable,
  };
}

function inputs(rows: SaturationRow[], timeline: TimelinePoint[] = []): VerdictInputs {
  return {
    rows,
    settings: SETTINGS,
    timeline,
    objectives: { p95Ms: 250, failRate: 0.01 },
    database: null,
    recoveryRatePerSec: 10,
  };
}

// 1_800_000_000 is 2027-01-15T08:00:00Z.
const T = 1_800_000_000;

test('the reason a row is not evidence names the time away and the refusals', () => {
  assert.equal(
    databaseOutageReason(4_230, 87),
    'the database was unreachable for 4.2 s of this step (87 requests answered 503, reason database)',
  );
  assert.equal(databaseOutageReason(350, 0), 'the database was unreachable for 350 ms of this step');
  assert.equal(isDatabaseOutageRow(row(40, 12, 2_000, 50)), true);
  assert.equal(isDatabaseOutageRow(row(40, 40)), false);
});

test('outages are runs of seconds the database was away, with when, how long, where and what they cost', () => {
  const timeline = [
    second(T, 'r020', 0),
    second(T + 1, 'r020', 600, 5), // away from 0.4 s into this second
    second(T + 2, 'r040', 1000, 40),
    second(T + 3, 'r040', 300, 3), // back 0.3 s into it
    second(T + 4, 'r040', 0),
    second(T + 6, 'r060', 1000, 60), // a second outage, after a gap, still going at the end
  ];
  assert.deepEqual(databaseOutagesOf(timeline), [
    { startS: T + 1, downMs: 1900, refused: 48, steps: ['r020', 'r040'], ongoing: false },
    { startS: T + 6, downMs: 1000, refused: 60, steps: ['r060'], ongoing: true },
  ]);
  // A service that does not watch its database: no field, no outage.
  assert.deepEqual(databaseOutagesOf([{ ...second(T, 'r020', 0), databaseDownMs: undefined }]), []);
});

test('the notes say when the database went away, for how long, during which steps, and that those rows are not evidence', () => {
  const rows = [row(20, 20, 600, 5), row(40, 12, 1300, 43), row(60, 60)];
  const timeline = [
    second(T, 'r020', 0),
    second(T + 1, 'r020', 600, 5),
    second(T + 2, 'r040', 1000, 40),
    second(T + 3, 'r040', 300, 3),
  ];
  assert.deepEqual(databaseOutageNotes(timeline, rows), [
    'the database was unreachable from 08:00:01 UTC (1 s into the run) for 1.9 s, during r020, r040; 48 requests were answered 503 (reason database): r020, r040 are not evidence, and no limit is named from them',
  ]);
  // Without a timeline, the rows' own figures.
  assert.deepEqual(databaseOutageNotes([], rows), [
    'the database was unreachable for 1.9 s in all; 48 requests were answered 503 (reason database): r020, r040 are not evidence, and no limit is named from them',
  ]);
  assert.deepEqual(databaseOutageNotes([], [row(20, 20)]), []);
});

test('a step the database was away for is never a plateau: below the ceiling, there is none', () => {
  // r040 served 12 of 40 because the database was away for 2 s of it: without the rule this
  // was a plateau at 40/s, and a resource would be named for it.
  const rows = [row(20, 20), row(40, 12, 2_000, 56), row(60, 59.5)];
  const v = decideVerdict(inputs(rows));
  assert.equal(v.plateau, null);
  assert.equal(v.firstLimit.resource, 'none');
  assert.equal(
    v.firstLimit.summary,
    'no plateau within the steps run (served followed offered up to 60/s); r040 left out: the database was unreachable during it',
  );
  // The steps around it stand: the safe limit is read past it.
  assert.equal(v.safeLimit.ratePerSec, 60);
  assert.ok(
    v.notes.some((n) => n.startsWith('the database was unreachable for 2 s in all')),
    v.notes.join('\n'),
  );
});

test('past the ceiling, the plateau is read from the steps that stand, never from the outage', () => {
  // The outage at r040 comes before the real plateau at r120 (a 2-connection pool at ~80/s).
  const rows = [row(20, 20), row(40, 5, 2_900, 100), row(80, 79), row(120, 82), row(160, 81)];
  const withRule = decideVerdict(inputs(rows));
  assert.equal(withRule.plateau?.step, 'r120');
  assert.notEqual(withRule.firstLimit.resource, 'inconclusive');
  // Each rate step's figures that fed the verdict came from steps that stand.
  assert.ok(
    !withRule.evidence.saturated.some((e) => e.includes('r040')),
    withRule.evidence.saturated.join('; '),
  );
  // Every rate step away: nothing can be read.
  const allAway = decideVerdict(inputs([row(20, 3, 3_000, 50), row(40, 5, 3_000, 110)]));
  assert.equal(allAway.plateau, null);
  assert.equal(
    allAway.firstLimit.summary,
    'no plateau can be read: the database was unreachable during every rate step',
  );
  assert.ok(!allAway.notes.some((n) => n.startsWith('no rate steps')));
});

test('recovery is not judged over seconds the database was away', () => {
  const timeline = [
    second(T, 'r060', 0),
    second(T + 1, 'drain', 0),
    second(T + 2, 'recovery', 700, 7),
    second(T + 3, 'recovery', 0),
  ];
  const v = decideVerdict(inputs([row(20, 20), row(60, 60)], timeline));
  assert.equal(v.recovery.seconds, null);
  assert.equal(v.recovery.summary, 'not judged: the database was unreachable for 0.7 s after the ramp');
});

test('the tables gain the database columns only for a run whose database was away', async () => {
  const templates = await loadTemplates();
  const away = [row(20, 20), row(40, 12, 2_000, 56)];
  const markdown = renderTableMarkdown(templates, away);
  const [header, , first, second] = markdown.split('\n');
  assert.match(header!, /\| db down s \| 503 db \|$/);
  assert.match(first!, /\| 0 \| 0 \|$/);
  assert.match(second!, /^\| r040 ⚠ \|.*\| 2 \| 56 \|$/);
  assert.match(
    markdown,
    /⚠ r040: the database was unreachable for 2 s of this step \(56 requests answered 503, reason database\) — not evidence/,
  );
  assert.match(renderTableText(away).split('\n')[0]!, /db down s {2}503 db$/);
  const usual = [row(20, 20), row(40, 40)];
  assert.doesNotMatch(renderTableMarkdown(templates, usual), /db down/);
  assert.doesNotMatch(renderTableText(usual), /db down/);
});

test('every step away: the safe limit says it is not known, not that the first step failed', () => {
  const rows = [row(20, 3, 3_000, 50), row(40, 5, 3_000, 110)];
  const verdict = decideVerdict(inputs(rows));
  const fields = recordFields(
    {
      kind: 'plateau.analysis',
      schemaVersion: 2,
      runId: null,
      sources: { client: null, server: null, manifest: null },
      objectives: { p95Ms: 250, failRate: 0.01 },
      table: rows,
      verdict,
    },
    undefined,
  );
  assert.equal(
    fields.safeLimit,
    'not known: the database was unreachable during every step that could be judged',
  );
});
