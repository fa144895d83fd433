// Every way a study can end leaves an honest run directory: real parts killed mid-study.
// test-run: load
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type AnalysisResult, EXIT_CODES } from '../contract/index.ts';
import { plateau } from './helpers/cli.ts';
import { processesMatching, waitFor } from './helpers/processes.ts';
import { newRunDirIn, reached, readManifest } from './helpers/run-dirs.ts';
import { SMALL_STUDY } from './helpers/small-study.ts';
import { isAlive, processesIn, studyParts } from './helpers/study-processes.ts';

const out = await mkdtemp(join(tmpdir(), 'plateau-endings-'));
after(() => rm(out, { recursive: true, force: true }));

/** The small study with a short recovery: about 15 s of load. */
const STUDY = ['run', ...SMALL_STUDY, '--recovery', '4', '--recovery-rate', '10', '-q'];

/**
 * Runs the small study into `outDir`, and once it reaches r120 calls `strike` with plateau's
 * child process and the study's parts (to kill one). Resolves with what plateau printed and
 * how it exited, the run directory, its run.json, record and analysis, and the parts.
 */
async function studyStruckAtR120(
  outDir: string,
  strike: (child: ChildProcess, parts: ReturnType<typeof studyParts>, dir: string) => Promise<void> | void,
) {
  let struck: Promise<{ parts: ReturnType<typeof studyParts>; dir: string }> | undefined;
  const before = existsSync(outDir) ? readdirSync(outDir) : [];
  const result = await plateau([...STUDY, '--out', outDir], {
    onStart: (child) => {
      struck = (async () => {
        const dir = await newRunDirIn(outDir, before);
        await reached(dir, 'r120');
        const parts = studyParts(child.pid!);
        await strike(child, parts, dir);
        return { parts, dir };
      })();
      // Awaited below, once plateau has exited; a failure here is reported there.
      struck.catch(() => undefined);
    },
  });
  const { parts, dir } = await struck!;
  assert.ok(existsSync(join(dir, 'record.txt')), `record.txt is written: ${result.stderr}`);
  const manifest = readManifest(dir);
  const record = await readFile(join(dir, 'record.txt'), 'utf8');
  const analysis = JSON.parse(await readFile(join(dir, 'analysis.json'), 'utf8')) as AnalysisResult;
  return { ...result, dir, manifest, record, analysis, parts };
}

/** Asserts that no part of the study runs any more: service, engine, PostgreSQL and its backends. */
async function assertNothingLeft(parts: ReturnType<typeof studyParts>) {
  assert.ok(
    parts.service && parts.engine && parts.postgres,
    `every part was found: ${JSON.stringify(parts)}`,
  );
  for (const [name, pid] of [
    ['service', parts.service],
    ['engine', parts.engine],
    ['postgres', parts.postgres.pid],
  ] as const)
    assert.equal(isAlive(pid), false, `the ${name} (pid ${pid}) is not running`);
  const dataDir = parts.postgres.dataDir;
  // PostgreSQL's backends notice their server's end on their own: wait for that, not a time.
  assert.ok(
    await waitFor(() => processesIn(dataDir).length === 0 && processesMatching(dataDir).length === 0, 10_000),
    `no process left in ${dataDir}: ${processesIn(dataDir).join(', ')}`,
  );
  assert.equal(existsSync(dataDir), false, 'the cluster directory is deleted');
}

/** The record's first line and its parts: the step the run ended in, the rows that stand. */
function runLine(record: string, detail: RegExp): { atStep: string; standing: string } {
  const first = record.split('\n')[0] ?? '';
  const match = new RegExp(
    `^run: {11}did not complete: ${detail.source} during (r\\d{3}); (rows? .+ stands?|no row stands)$`,
  ).exec(first);
  assert.ok(match, `the record's first line says why the run did not complete: ${first}`);
  return { atStep: match[match.length - 2]!, standing: match[match.length - 1]! };
}

/** What every study that died must show: its ending in run.json, the row it died in cut short, the files. */
function assertEndedHonestly(
  study: Awaited<ReturnType<typeof studyStruckAtR120>>,
  reason: string,
  exitCode: number,
  detail: RegExp,
) {
  assert.equal(study.code, exitCode, study.stderr);
  assert.equal(study.manifest.status, 'failed');
  assert.equal(study.manifest.ended?.reason, reason);
  assert.match(study.manifest.ended?.detail ?? '', detail);
  const { atStep, standing } = runLine(study.record, detail);
  assert.equal(study.manifest.ended?.atStep, atStep);
  // The step the run ended in is cut short, or has no row at all when none of its samples
  // outlived the end (an engine killed in its first second).
  const row = study.analysis.table.find((r) => r.step === atStep);
  assert.ok(!row || row.cutShort, `${atStep}, where the run ended, is cut short: ${row?.invalid}`);
  assert.ok(!standing.includes(atStep), `${atStep} does not stand`);
  assert.doesNotMatch(study.record, /no plateau within the steps run/);
  assert.deepEqual(study.analysis.ended?.rowsStanding.includes(atStep), false);
  for (const file of ['report.html', 'table.md', 'k6.csv.gz'])
    assert.ok(existsSync(join(study.dir, file)), `${file} is kept`);
  assert.equal(existsSync(join(study.dir, 'run.lock')), false, 'the lock is released');
  assert.match(
    study.stderr,
    new RegExp(`plateau: ${detail.source} during ${atStep}: the run did not complete`),
  );
  assert.match(study.stderr, /what was collected is kept and analysed in /);
}

test('the service killed (SIGKILL) during r120: service-died, exit 120, r120 cut short', async () => {
  const study = await studyStruckAtR120(out, (_child, parts) => {
    assert.ok(parts.service, 'the service runs');
    process.kill(parts.service, 'SIGKILL');
  });
  assertEndedHonestly(
    study,
    'service-died',
    EXIT_CODES.serviceDied,
    /the statement service died \(killed by SIGKILL\)/,
  );
  assert.match(study.stderr, /service\.log ends with/);
  await assertNothingLeft(study.parts);
});

test("plateau's PostgreSQL killed (SIGKILL) during r120: database-died, exit 121, the client data analysed", async () => {
  const study = await studyStruckAtR120(out, (_child, parts) => {
    assert.ok(parts.postgres, 'the embedded PostgreSQL runs');
    process.kill(parts.postgres.pid, 'SIGKILL');
  });
  assertEndedHonestly(
    study,
    'database-died',
    EXIT_CODES.databaseDied,
    /the embedded PostgreSQL died \(killed by SIGKILL\)/,
  );
  assert.ok(
    study.analysis.table.some((r) => r.step === 'r040' && r.requests > 0),
    'the client data was analysed',
  );
  await assertNothingLeft(study.parts);
});

test('the load engine killed (SIGKILL) during r120: generator-died, exit 122, its cut gzip read to the last line', async () => {
  const study = await studyStruckAtR120(out, (_child, parts) => {
    assert.ok(parts.engine, 'the engine runs');
    process.kill(parts.engine, 'SIGKILL');
  });
  assertEndedHonestly(
    study,
    'generator-died',
    EXIT_CODES.generatorDied,
    /the load engine died \(killed by SIGKILL\)/,
  );
  assert.match(study.record, /k6\.csv\.gz: unexpected end of file: the file ends mid-stream/);
  await assertNothingLeft(study.parts);
});

test('SIGTERM during r120: interrupted, exit 105, the rows before it stand', async () => {
  const study = await studyStruckAtR120(out, (child) => void child.kill('SIGTERM'));
  assert.equal(study.code, EXIT_CODES.interrupted, study.stderr);
  assert.equal(study.manifest.status, 'interrupted');
  assert.equal(study.manifest.ended?.reason, 'interrupted');
  const { atStep } = runLine(study.record, /stopped by SIGTERM/);
  assert.equal(study.manifest.ended?.atStep, atStep);
  assert.match(study.stderr, /interrupted: partial run kept in /);
  await assertNothingLeft(study.parts);
});

/** Mounts a tmpfs of `size` (e.g. `4m`) at a new directory, `ro` to make it read-only; unmounted after the test. */
async function tmpfs(size: string, options = ''): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}${options ? `,${options}` : ''}`, 'tmpfs', dir]);
  after(async () => {
    try {
      execFileSync('umount', [dir]);
    } catch {
      execFileSync('umount', ['-l', dir]); // something still held a file open: detach it
    }
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Fills the disk holding `dir` to its last byte. */
async function fill(dir: string): Promise<void> {
  const fs = await statfs(dir);
  await writeFile(join(dir, 'filler'), Buffer.alloc(fs.bavail * fs.bsize)).catch((error) => {
    if (error.code !== 'ENOSPC') throw error;
  });
}

test('the disk of the run directory fills during r120: disk-full, exit 123, run.json, record and report still written', async () => {
  const disk = await tmpfs('4m');
  const study = await studyStruckAtR120(join(disk, 'runs'), () => fill(disk));
  assertEndedHonestly(study, 'disk-full', EXIT_CODES.diskFull, /the disk holding \S+ filled \(\d+ KB free\)/);
  assert.equal(existsSync(join(study.dir, '.plateau-reserve')), false, 'the room kept was used');
  await assertNothingLeft(study.parts);
});

test('a read-only --out, a full one and an --out that is a file: a clear message, exit 104, nothing made', async () => {
  const readOnly = await tmpfs('1m', 'ro');
  const refused = await plateau([...STUDY, '--out', join(readOnly, 'runs')]);
  assert.equal(refused.code, EXIT_CODES.invalidConfig, refused.stderr);
  assert.match(
    refused.stderr,
    /cannot create a run directory in \S+: the file system is read-only \(EROFS\)/,
  );

  const small = await tmpfs('1m');
  const full = await plateau([...STUDY, '--out', join(small, 'runs')]);
  assert.equal(full.code, EXIT_CODES.invalidConfig, full.stderr);
  assert.match(
    full.stderr,
    /the disk holding \S+ has (only [\d.]+ [KM]B free|no room for the study's files)/,
  );
  assert.match(full.stderr, /hint: this study needs [\d.]+ MB free at least/);
  assert.deepEqual(await readdir(join(small, 'runs')), [], 'the run directory it began is removed');

  const file = join(out, 'not-a-directory');
  await writeFile(file, 'kept\n');
  const notDir = await plateau([...STUDY, '--out', file]);
  assert.equal(notDir.code, EXIT_CODES.invalidConfig, notDir.stderr);
  assert.match(notDir.stderr, /--out \S+ is a file, not a directory/);
  assert.equal(readFileSync(file, 'utf8'), 'kept\n', 'the file is untouched');
});

test('plateau analyze of runs that died: the same first line; a stale lock settled, a live one and a cut run.json refused', async () => {
  const dir = join(out, 'died-copy');
  const source = (await readdir(out))
    .map((d) => join(out, d))
    .find((d) => {
      try {
        return readManifest(d).ended?.reason === 'service-died';
      } catch {
        return false;
      }
    });
  assert.ok(source, 'the service-died run of the first test is there');
  execFileSync('cp', ['-r', source, dir]);
  const before = (await readFile(join(dir, 'record.txt'), 'utf8')).split('\n')[0];

  const again = await plateau(['analyze', dir]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(
    again.stdout.split('\n').find((l) => l.startsWith('run:')),
    before,
    'analyze says the same',
  );

  // A study whose plateau process was killed: run.json still says running, its lock stays.
  const crashed = { ...readManifest(dir), status: 'running', ended: undefined };
  await writeFile(join(dir, 'run.json'), JSON.stringify(crashed));
  await writeFile(
    join(dir, 'run.lock'),
    JSON.stringify({ pid: 999_999_999, host: hostname(), startedAt: '' }),
  );
  const settled = await plateau(['analyze', dir]);
  assert.equal(settled.code, 0, settled.stderr);
  assert.match(
    settled.stderr,
    /process \(?999999999\)? is gone and left its lock: run\.json now says the run failed/,
  );
  assert.equal(readManifest(dir).status, 'failed');
  assert.match(
    settled.stdout,
    /^run: {11}did not complete: plateau stopped before the run ended \(its process 999999999 is gone\) during r\d{3}; /m,
  );
  assert.equal(existsSync(join(dir, 'run.lock')), false);

  // A lock held by a live process: the study is still writing, nothing is touched.
  await writeFile(
    join(dir, 'run.lock'),
    JSON.stringify({ pid: process.pid, host: hostname(), startedAt: '' }),
  );
  const analysedAt = readFileSync(join(dir, 'analysis.json'), 'utf8');
  const live = await plateau(['analyze', dir]);
  assert.equal(live.code, EXIT_CODES.invalidConfig, live.stderr);
  assert.match(live.stderr, new RegExp(`is still being written by plateau process ${process.pid}`));
  assert.equal(readFileSync(join(dir, 'analysis.json'), 'utf8'), analysedAt, 'nothing was written');
  await rm(join(dir, 'run.lock'));

  // run.json cut short by something else: refused, with the way to read the client side alone.
  const whole = readFileSync(join(dir, 'run.json'), 'utf8');
  await writeFile(join(dir, 'run.json'), whole.slice(0, whole.length / 2));
  const cut = await plateau(['analyze', dir]);
  assert.equal(cut.code, EXIT_CODES.invalidConfig, cut.stderr);
  assert.match(cut.stderr, /run\.json is not valid JSON/);
  assert.match(cut.stderr, /plateau analyze \S+k6\.csv\.gz/);
  assert.equal(readFileSync(join(dir, 'analysis.json'), 'utf8'), analysedAt, 'nothing was written');
});
