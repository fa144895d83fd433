// A run that ended early: its cut steps are not evidence, its record says so first.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { RunEnding, RunManifest, SaturationRow } from '../contract/index.ts';
import { analyzePath } from './analyze-run.ts';
import type { ClientSample } from './client-sample.ts';
import { CompleteSeconds, endingOf, markCutShort, plannedRequests, runLine } from './run-ending.ts';

const dir = await mkdtemp(join(tmpdir(), 'plateau-ending-'));
after(() => rm(dir, { recursive: true, force: true }));

const LOAD: RunManifest['load'] = {
  script: 'capacity',
  stepsPerSec: [20, 40, 60, 80],
  holdSeconds: 5,
  rampSeconds: 1,
  recoveryRatePerSec: 10,
  recoverySeconds: 8,
  jitterSeconds: 0,
  p95Ms: 250,
  failRate: 0.01,
};

test('planned requests follow the ramp: each hold at its rate, less the climb from the rate before', () => {
  const cases: [string, number | null][] = [
    ['r020', 20 * 4 + 10 * 1], // climbs from 0 over 1 s, then 4 s at 20/s
    ['r040', 40 * 4 + 30 * 1], // from 20 to 40 over the first second
    ['r080', 80 * 4 + 70 * 1],
    ['drain', 10 * 5], // the recovery rate over the 5 s drain
    ['recovery', 10 * 3], // and over the rest of the 8 s recovery
    ['r100', null], // not in the plan
    ['c008', null], // a closed-model level: no planned count
  ];
  for (const [step, planned] of cases) assert.equal(plannedRequests(step, LOAD), planned, step);
  // Repeats: the second run of 20/s ramps down from 80 over its first second.
  const repeated = { ...LOAD, stepsPerSec: [20, 40, 60, 80, 20, 60] };
  assert.equal(plannedRequests('r020b', repeated), 20 * 4 + 50 * 1);
  assert.equal(plannedRequests('r060b', repeated), 60 * 4 + 40 * 1);
  assert.equal(plannedRequests('r040b', repeated), null, 'no second run of 40/s');
});

/** A rate row as the table builder makes it, with `requests` sent. */
function row(step: string, offered: number | null, requests: number): SaturationRow {
  return {
    step,
    offeredPerSec: offered,
    sentPerSec: requests / 5,
    servedPerSec: requests / 5,
    servedSource: 'client',
    seconds: 5,
    requests,
    latencyMs: { med: 10, p95: 20, p99: 30, max: 40 },
    failures: {
      shed: 0,
      rateLimited: 0,
      serverErrors: 0,
      clientErrors: 0,
      timeouts: 0,
      networkErrors: 0,
    },
    failureRate: 0,
    dropped: 0,
    generator: { lagMsMax: null, cpuPctMax: null },
    server: null,
    invalid: null,
  };
}

test('a step with under 90 % of its planned requests is cut short and invalid; the rest stand', () => {
  const rows = [
    row('r020', 20, 90), // all of its 90
    row('r040', 40, 171), // 90 % of 190: stands
    row('r060', 60, 280), // all of its 290 bar 10
    row('r080', 80, 41), // 8.2/s of 80: the run ended here
  ];
  rows[2]!.invalid = 'the generator dropped 3 iterations';
  markCutShort(rows, LOAD);
  assert.deepEqual(
    rows.map((r) => r.cutShort?.plannedRequests ?? null),
    [null, null, null, 390],
  );
  assert.equal(rows[3]!.invalid, 'the run ended during it: 41 of its 390 planned requests sent');
  assert.equal(rows[2]!.invalid, 'the generator dropped 3 iterations', 'other reasons are kept');
  const ending: RunEnding = {
    reason: 'service-died',
    detail: 'the service died (killed by SIGKILL)',
    atStep: 'r080',
  };
  // r060 is invalid (drops), so only r020–r040 stand.
  assert.equal(
    runLine(ending, rows),
    'did not complete: the service died (killed by SIGKILL) during r080; rows r020–r040 stand',
  );
  rows[2]!.invalid = null;
  assert.match(runLine(ending, rows), /; rows r020–r060 stand$/);
  assert.match(
    runLine(
      { ...ending, atStep: null },
      [row('r020', 20, 3)].map((r) => ({ ...r, invalid: 'x' })),
    ),
    / before the load began; no row stands$/,
  );
});

test('one request short of a few planned is a whole step: starts are whole, and one on the boundary goes either side', () => {
  // The probe's first step: 2/s for 3 s, climbing from 0 over the first second, plans 5 and sends 4.
  const probeLoad = { ...LOAD, stepsPerSec: [2, 4], holdSeconds: 3, rampSeconds: 1 };
  const rows = [row('p002', 2, 4), row('p004', 4, 8)];
  markCutShort(rows, probeLoad);
  assert.deepEqual(
    rows.map((r) => r.cutShort?.plannedRequests ?? null),
    [null, 11],
    'p002 stands; p004 sent 8 of its 11: the run ended during it',
  );
});

test('a closed-model level is cut short by the seconds it sent, against its hold', () => {
  const level = (step: string, spanS: number) => ({
    ...row(step, null, 100),
    window: { startS: 1000, endS: 1000 + spanS },
  });
  const rows = [level('c004', 4.8), level('c008', 2)];
  markCutShort(rows, { ...LOAD, model: 'closed', vusLevels: [4, 8] });
  assert.equal(rows[0]!.cutShort, undefined);
  assert.equal(rows[1]!.invalid, 'the run ended during it: 2 s of its 5 s sent');
});

test("the ending comes from run.json's ended, else from what its status says", () => {
  const base = { status: 'failed', reachedStep: 'r040', warnings: ['the load engine failed (exit 107)'] };
  const manifest = (fields: object) => ({ ...base, ...fields }) as unknown as RunManifest;
  assert.equal(endingOf(manifest({ status: 'completed' })), undefined);
  assert.equal(endingOf(undefined), undefined, 'a bare k6 file says nothing of how it ended');
  const ended: RunEnding = { reason: 'disk-full', detail: 'the disk filled', atStep: 'r060' };
  assert.deepEqual(endingOf(manifest({ ended })), ended);
  assert.deepEqual(endingOf(manifest({})), {
    reason: 'failed',
    detail: 'the load engine failed (exit 107)',
    atStep: 'r040',
  });
  assert.match(endingOf(manifest({ status: 'running' }))!.detail, /run\.json still says running/);
});

test('the last second seen is held back and dropped at the end; late samples of older seconds pass', () => {
  const passed: number[] = [];
  const seconds = new CompleteSeconds((s) => passed.push(s.timeS));
  const at = (timeS: number) => ({ metric: 'http_reqs', timeS, value: 1 }) as ClientSample;
  for (const t of [100.1, 100.9, 101.2, 100.95, 102.0, 102.5]) seconds.add(at(t));
  assert.deepEqual(seconds.close(), { second: 102, samples: 2 });
  // 100.1 and 100.9 wait until 101.2 arrives; 100.95, late, passes at once; 101.2 waits for 102.
  assert.deepEqual(passed, [100.1, 100.9, 100.95, 101.2]);
});

const HEADER =
  'metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata';

test('plateau analyze of a run whose service died at r080: r080 is not evidence, the record says so first', async () => {
  const run = join(dir, 'died');
  await mkdir(run);
  const t0 = 1_800_000_000;
  const lines = [HEADER];
  const request = (timeMs: number, step: string) =>
    [
      `http_reqs,${timeMs},1.000000,,,,true,,GET,GET /s,HTTP/1.1,capacity,,200,,,GET /s,step=${step},`,
      `http_req_duration,${timeMs},12.000000,,,,true,,GET,GET /s,HTTP/1.1,capacity,,200,,,GET /s,step=${step},`,
    ].join('\n');
  // r020–r060 as planned; r080 for its first 1.5 s only, the last half second of which is
  // the second the run ended in.
  for (const [k, rate] of LOAD.stepsPerSec.entries()) {
    const seconds = rate === 80 ? 1.5 : 5;
    const count = Math.round(rate * seconds);
    for (let i = 0; i < count; i++)
      lines.push(request(Math.round((t0 + k * 5 + (i / count) * seconds) * 1000), `r0${rate}`));
  }
  const gz = gzipSync(`${lines.join('\n')}\n`);
  // The engine was killed: its gzip stream stops mid-member.
  await writeFile(join(run, 'k6.csv.gz'), gz.subarray(0, gz.length - 40));
  const manifest = {
    kind: 'plateau.run',
    schemaVersion: 2,
    id: 'died',
    status: 'failed',
    ended: {
      reason: 'service-died',
      detail: 'the statement service died (killed by SIGKILL)',
      atStep: 'r080',
    },
    reachedStep: 'r080',
    warnings: [],
    target: 'http://127.0.0.1:1',
    service: null,
    database: null,
    load: LOAD,
  };
  await writeFile(join(run, 'run.json'), JSON.stringify(manifest));
  const out = await analyzePath(run);
  const r080 = out.analysis.table.find((r) => r.step === 'r080')!;
  assert.ok(r080.cutShort, 'r080 is cut short');
  assert.match(r080.invalid ?? '', /^the run ended during it: \d+ of its 390 planned requests sent/);
  const record = await readFile(join(run, 'record.txt'), 'utf8');
  assert.equal(
    record.split('\n')[0],
    'run:           did not complete: the statement service died (killed by SIGKILL) during r080; rows r020–r060 stand',
  );
  assert.doesNotMatch(record, /no plateau within the steps run/);
  assert.match(
    record,
    /^first limit: {3}not known: the run ended during r080 \(the statement service died \(killed by SIGKILL\)\); served followed offered up to 60\/s, the last step that stands$/m,
  );
  assert.match(
    record,
    /^safe limit: {4}at least 60\/s \(p95 [\d.]+ ms, 0% failures\): the run ended before a step above it/m,
  );
  assert.match(record, /k6\.csv\.gz: unexpected end of file: the file ends mid-stream/);
  assert.match(record, /analysed up to its last complete second/);
  assert.equal(out.analysis.verdict.firstLimit.resource, 'inconclusive');
  assert.equal(out.analysis.verdict.safeLimit.atLeast, true);
  assert.deepEqual(out.analysis.ended?.rowsStanding, ['r020', 'r040', 'r060']);
  assert.match(out.tableText, /^r080 ! /m, 'the terminal table marks the row');
  assert.match(
    await readFile(join(run, 'report.html'), 'utf8'),
    /did not complete: the statement service died/,
  );
});
