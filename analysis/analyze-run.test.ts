// Bad input to analysis gets a clear message, never a stack trace; partial data still analyses.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isPlateauError } from '../contract/index.ts';
import { analyzePath } from './analyze-run.ts';
import { DEFAULT_CRITERIA } from './verdict.ts';

const dir = await mkdtemp(join(tmpdir(), 'plateau-analyze-'));
after(() => rm(dir, { recursive: true, force: true }));

const HEADER =
  'metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata';
const req = (t: number, status: number, step?: string, ms = 50) =>
  [
    `http_reqs,${t},1.000000,,,,true,,GET,GET /s,HTTP/1.1,capacity,,${status},,,GET /s,${step ? `step=${step}` : ''},`,
    `http_req_duration,${t},${ms.toFixed(6)},,,,true,,GET,GET /s,HTTP/1.1,capacity,,${status},,,GET /s,${step ? `step=${step}` : ''},`,
  ].join('\n');

/** Creates `<dir>/<name>/` holding a k6.csv of `count` 200s tagged `step`, one per second. */
async function runWithRequests(name: string, count: number, step: string): Promise<string> {
  const run = join(dir, name);
  await mkdir(run);
  const lines = [HEADER];
  for (let t = 0; t < count; t++) lines.push(req(1_800_000_000 + t, 200, step));
  await writeFile(join(run, 'k6.csv'), `${lines.join('\n')}\n`);
  return run;
}

async function rejectsWith(path: string, message: RegExp) {
  await assert.rejects(
    analyzePath(path),
    (error: unknown) => isPlateauError(error) && message.test(error.message) && error.hint !== undefined,
  );
}

/** A run.json for a test run: a plan of `steps` held `holdSeconds`, the rest as given. */
function manifestJson(fields: {
  id: string;
  steps: number[];
  holdSeconds: number;
  target?: string;
  status?: string;
  service?: Record<string, unknown> | null;
  jitterSeconds?: number;
}): string {
  return JSON.stringify({
    kind: 'plateau.run',
    schemaVersion: 1,
    id: fields.id,
    ...(fields.status ? { status: fields.status } : {}),
    target: fields.target ?? 'x',
    service: fields.service ?? null,
    database: null,
    load: {
      stepsPerSec: fields.steps,
      holdSeconds: fields.holdSeconds,
      rampSeconds: 1,
      recoveryRatePerSec: 5,
      recoverySeconds: 10,
      jitterSeconds: fields.jitterSeconds ?? 0,
      p95Ms: 250,
      failRate: 0.01,
    },
  });
}

test('a missing path, an empty file, a non-k6 CSV and a run directory without output are named', async () => {
  await rejectsWith(join(dir, 'nope'), /does not exist/);
  await writeFile(join(dir, 'empty.csv'), '');
  await rejectsWith(join(dir, 'empty.csv'), /is empty/);
  await writeFile(join(dir, 'other.csv'), 'a,b,c\n1,2,3\n');
  await rejectsWith(join(dir, 'other.csv'), /is not k6 CSV output/);
  await mkdir(join(dir, 'run-empty'));
  await rejectsWith(join(dir, 'run-empty'), /holds no k6 output/);
  await writeFile(join(dir, 'x.txt'), 'hello');
  await rejectsWith(join(dir, 'x.txt'), /neither k6 CSV nor NDJSON/);
});

test('a CSV without step tags is analysed per scenario and time window, and says so', async () => {
  const lines = [HEADER];
  for (let t = 0; t < 25; t++) lines.push(req(1_800_000_000 + t, 200));
  await writeFile(join(dir, 'untagged.csv'), `${lines.join('\n')}\n`);
  const out = await analyzePath(join(dir, 'untagged.csv'));
  assert.ok(out.analysis.table.length >= 3, 'several windows');
  assert.ok(out.analysis.table.every((r) => r.step.startsWith('capacity@')));
  assert.match(out.analysis.verdict.notes.join(' '), /no step tag/);
  assert.equal(out.analysis.verdict.plateau, null);
});

test('a truncated last line and a broken server.json: the first is tolerated, the second named', async () => {
  const run = join(dir, 'run-partial');
  await mkdir(run);
  const lines = [HEADER];
  for (let t = 0; t < 10; t++) lines.push(req(1_800_000_000 + t, 200, 'r010'));
  await writeFile(join(run, 'k6.csv'), `${lines.join('\n')}\nhttp_reqs,1800000010,1.0000`);
  const out = await analyzePath(run);
  assert.equal(out.analysis.table[0]?.requests, 10);
  assert.match(await readFile(join(run, 'record.txt'), 'utf8'), /^service: {7}unknown \(no run\.json\)/);
  await writeFile(join(run, 'server.json'), '{"kind":"plateau.server-steps","schemaVersion":1,"steps":[');
  await rejectsWith(run, /server\.json is not valid JSON/);
  await writeFile(
    join(run, 'server.json'),
    JSON.stringify({ kind: 'plateau.server-steps', schemaVersion: 9 }),
  );
  await rejectsWith(run, /newer than this plateau reads/);
});

test('a client file from a different run than the manifest is flagged', async () => {
  const run = await runWithRequests('run-mismatch', 5, 'r999');
  await writeFile(
    join(run, 'run.json'),
    manifestJson({ id: 'x', steps: [20, 40], holdSeconds: 5, target: 'http://127.0.0.1:1' }),
  );
  const out = await analyzePath(run);
  assert.match(out.analysis.verdict.notes.join(' '), /steps the manifest did not plan \(999\/s\)/);
});

test("--steady leaves each step's ramp seconds out of its rates", async () => {
  const run = join(dir, 'run-steady');
  await mkdir(run);
  const lines = [HEADER];
  const t0 = 1_800_000_100;
  // r020: 4 s hold, the first (ramp) second has 5 requests, then 20/s; r040 likewise.
  for (const [k, rate] of [20, 40].entries()) {
    for (let s = 0; s < 4; s++)
      for (let i = 0; i < (s === 0 ? 5 : rate); i++) lines.push(req(t0 + k * 4 + s, 200, `r0${rate}`));
  }
  await writeFile(join(run, 'k6.csv'), `${lines.join('\n')}\n`);
  await writeFile(join(run, 'run.json'), manifestJson({ id: 's', steps: [20, 40], holdSeconds: 4 }));
  const whole = await analyzePath(run);
  assert.equal(
    whole.analysis.table[0]?.sentPerSec,
    (5 + 60) / 4,
    'whole hold by default, as the step tags count',
  );
  const steady = await analyzePath(run, { steady: true });
  assert.equal(steady.analysis.table[0]?.sentPerSec, 20);
  assert.equal(steady.analysis.table[1]?.sentPerSec, 40);
  assert.equal(steady.analysis.table[0]?.seconds, 3);
  assert.match(steady.analysis.verdict.notes.join(' '), /leave out the first 1 s/);
});

test('--jittered-run names a jittered run of the same configuration whose safe limit the record quotes', async () => {
  const parent = join(dir, 'runs-jitter');
  const manifestFor = (id: string, jitterSeconds: number) =>
    manifestJson({
      id,
      status: 'completed',
      target: 'reference statement service',
      service: { POOL_MAX: 4 },
      steps: [10, 20],
      holdSeconds: 4,
      jitterSeconds,
    });
  const write = async (id: string, jitter: number, slowAt20: boolean) => {
    const run = join(parent, id);
    await mkdir(run, { recursive: true });
    const lines = [HEADER];
    for (const [k, rate] of [10, 20].entries()) {
      for (let s = 0; s < 4; s++) {
        for (let i = 0; i < rate; i++)
          lines.push(req(1_800_000_200 + k * 4 + s, 200, `r0${rate}`, rate === 20 && slowAt20 ? 400 : 50));
      }
    }
    await writeFile(join(run, 'k6.csv'), `${lines.join('\n')}\n`);
    await writeFile(join(run, 'run.json'), manifestFor(id, jitter));
  };
  await write('20261201-000000-aaaaaa', 0.5, true); // jittered: r020 misses p95
  await write('20261201-000100-bbbbbb', 0, false); // even arrivals: both steps pass
  const jittered = join(parent, '20261201-000000-aaaaaa');
  await analyzePath(jittered);
  // A verdict depends only on its own run: a jittered run beside it is not looked for.
  const alone = await analyzePath(join(parent, '20261201-000100-bbbbbb'));
  assert.equal(alone.analysis.verdict.safeLimit.fromRun, null);
  const even = await analyzePath(join(parent, '20261201-000100-bbbbbb'), { jitteredRun: jittered });
  assert.equal(even.analysis.verdict.safeLimit.ratePerSec, 10);
  assert.equal(even.analysis.verdict.safeLimit.fromRun, '20261201-000000-aaaaaa');
  assert.match(
    even.record,
    /^safe limit: {4}10\/s with jittered arrivals \(from run 20261201-000000-aaaaaa\)/m,
  );

  // A jittered safe limit at or above this run's plateau is never quoted: here the even run
  // refused half of r020 (503s: 10 served of 20 sent), and the jittered one passed both steps.
  const refusing = join(parent, '20261201-000200-cccccc');
  await mkdir(refusing, { recursive: true });
  const refused = [HEADER];
  for (const [k, rate] of [10, 20].entries())
    for (let s = 0; s < 4; s++)
      for (let i = 0; i < rate; i++)
        refused.push(req(1_800_000_200 + k * 4 + s, rate === 20 && i % 2 === 1 ? 503 : 200, `r0${rate}`));
  await writeFile(join(refusing, 'k6.csv'), `${refused.join('\n')}\n`);
  await writeFile(join(refusing, 'run.json'), manifestFor('20261201-000200-cccccc', 0));
  const calm = '20261201-000300-dddddd';
  await write(calm, 0.5, false); // jittered, and both steps met the objectives: 20/s
  await analyzePath(join(parent, calm));
  const capped = await analyzePath(refusing, { jitteredRun: join(parent, calm) });
  assert.equal(capped.analysis.verdict.plateau?.step, 'r020');
  assert.equal(capped.analysis.verdict.safeLimit.fromRun, null);
  assert.ok(
    capped.analysis.verdict.notes.some((n) =>
      /jittered run 20261201-000300-dddddd's safe limit of 20\/s is not quoted: it is at or above this run's plateau/.test(
        n,
      ),
    ),
    capped.analysis.verdict.notes.join('\n'),
  );

  // Judged by other criteria than the jittered run was, its safe limit is not borrowed.
  const stricter = await analyzePath(join(parent, '20261201-000100-bbbbbb'), {
    criteria: { ...DEFAULT_CRITERIA, followingShare: 0.95 },
    jitteredRun: jittered,
  });
  assert.equal(stricter.analysis.verdict.safeLimit.fromRun, null);
  assert.ok(
    stricter.analysis.verdict.notes.some((n) =>
      n.startsWith('jittered run 20261201-000000-aaaaaa was judged by other criteria'),
    ),
    stricter.analysis.verdict.notes.join('\n'),
  );
});

test("a client file with fewer requests than k6's summary counted is flagged as cut short", async () => {
  const run = await runWithRequests('run-cut', 5, 'r010');
  await writeFile(
    join(run, 'summary.json'),
    JSON.stringify({ metrics: { http_reqs: { count: 50, rate: 10 } } }),
  );
  const out = await analyzePath(run);
  assert.match(out.analysis.verdict.notes.join(' '), /holds 5 of the 50 requests k6's summary counted/);
});

test("generator.json supplies a k6 run's generator CPU, and a saturated machine is noted", async () => {
  const run = await runWithRequests('run-generator', 20, 'r020');
  const t0 = 1_800_000_000;
  const seconds = Array.from({ length: 20 }, (_, i) => ({
    t: t0 + i,
    cpuPct: 198,
    usablePct: i === 10 ? 99 : 60,
    machinePct: 97,
  }));
  await writeFile(
    join(run, 'generator.json'),
    JSON.stringify({
      kind: 'plateau.generator-cpu',
      schemaVersion: 1,
      engine: 'k6',
      usableCores: 2,
      seconds,
    }),
  );
  const { analysis } = await analyzePath(run);
  const row = analysis.table.find((r) => r.step === 'r020')!;
  assert.equal(row.generator.cpuPctMax, 99, 'the busiest second, as % of the cores k6 can use');
  assert.match(analysis.verdict.notes.join('\n'), /machine's CPU was saturated during r020/);
  await writeFile(join(run, 'generator.json'), '{"kind":"plateau.generator-cpu","schemaVersion":9}');
  await rejectsWith(run, /generator\.json has schemaVersion 9, newer than this plateau reads/);
});

test('with engine workers each writes its own CPU and lag: a step where one worker was at its limit is the generator’s', async () => {
  const run = await runWithRequests('run-workers', 20, 'r020');
  const t0 = 1_800_000_000;
  const health = (metric: string, t: number, value: number) =>
    `${metric},${t},${value.toFixed(6)},,,,,,,,,,,,,,,,`;
  const rows: string[] = [];
  for (let i = 0; i < 20; i++) {
    // Worker 1 idles along; worker 2 is at its core's limit in second 12, its loop 140 ms late in second 13.
    rows.push(health('engine_cpu_pct', t0 + i, 40), health('engine_lag_ms', t0 + i, 1.5));
    rows.push(
      health('engine_cpu_pct', t0 + i, i === 12 ? 99 : 45),
      health('engine_lag_ms', t0 + i, i === 13 ? 140 : 2),
    );
  }
  await writeFile(
    join(run, 'k6.csv'),
    `${(await readFile(join(run, 'k6.csv'), 'utf8')).trimEnd()}\n${rows.join('\n')}\n`,
  );
  // generator.json of a run on two workers (each worker's CPU beside the busiest), read by this plateau as before.
  await writeFile(
    join(run, 'generator.json'),
    JSON.stringify({
      kind: 'plateau.generator-cpu',
      schemaVersion: 1,
      engine: 'embedded',
      usableCores: 2,
      workers: 2,
      seconds: [{ t: t0, cpuPct: 88, usablePct: 45, workers: [40, 45], machinePct: 60 }],
    }),
  );
  const { analysis } = await analyzePath(run);
  const row = analysis.table.find((r) => r.step === 'r020')!;
  assert.deepEqual(
    row.generator,
    { lagMsMax: 140, cpuPctMax: 99 },
    'the busiest worker in each second, not the sum',
  );
  assert.match(row.invalid ?? '', /generator event-loop lag reached 140 ms.*generator CPU reached 99%/);
});

test('--jittered-run that is not a completed jittered run of the same configuration is refused with why', async () => {
  const even = await runWithRequests('run-even-for-jitter', 5, 'r010');
  await writeFile(
    join(even, 'run.json'),
    manifestJson({ id: 'even', status: 'completed', steps: [10], holdSeconds: 5 }),
  );

  await assert.rejects(
    analyzePath(even, { jitteredRun: join(dir, 'nowhere') }),
    (error: unknown) =>
      isPlateauError(error) && /--jittered-run .*nowhere: it holds no run\.json/.test(error.message),
  );
  await assert.rejects(
    analyzePath(even, { jitteredRun: even }),
    (error: unknown) =>
      isPlateauError(error) && /that run was not jittered/.test(error.message) && error.exitCode === 104,
  );
});
