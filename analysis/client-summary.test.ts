// A run directory's client side is read once: client-summary.json.gz stands in for the client
// file while it matches it, is rebuilt with a note when it does not, and a run still being
// written is refused. Real files throughout: generated k6 CSVs, gzip, run.lock, a real writer.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { constants, gunzipSync, gzipSync } from 'node:zlib';
import { isPlateauError } from '../contract/index.ts';
import { type GeneratedRun, generatedCsv, writeGeneratedRun } from '../test/helpers/generated-run.ts';
import { type AnalysisOutput, analyzePath } from './analyze-run.ts';
import { CLIENT_SUMMARY_FILE } from './client-summary.ts';
import { RUN_LOCK_FILE } from './live-run.ts';
import { readRun } from './read-run.ts';
import { writeReport } from './write-report.ts';

const root = await mkdtemp(join(tmpdir(), 'plateau-client-summary-'));
after(() => rm(root, { recursive: true, force: true }));

const RUN: GeneratedRun = { seed: 21, stepsPerSec: [20, 40, 60, 80], holdSeconds: 4, msStamps: true };
/** A whole-second modification time a test can set the client file back to. */
const MTIME_S = 1_800_000_000;

let runs = 0;
/** A run directory holding a generated run (gzip unless `plain`), its client file's mtime set to MTIME_S. */
async function runDir(
  options: { plain?: boolean; run?: GeneratedRun } = {},
): Promise<{ dir: string; csv: string }> {
  const dir = join(root, `run-${++runs}`);
  await mkdir(dir);
  const csv = writeGeneratedRun(dir, options.run ?? RUN, { gzip: options.plain !== true });
  utimesSync(csv, MTIME_S, MTIME_S);
  return { dir, csv };
}

/** Everything an analysis hands on that the client side decides. */
function figures(output: AnalysisOutput) {
  return {
    analysis: output.analysis,
    record: output.record,
    tableText: output.tableText,
    tableMarkdown: output.tableMarkdown,
    readStats: output.readStats,
    clientSeconds: output.seriesSources.clientSeconds,
  };
}

const notesOf = (output: AnalysisOutput) => output.analysis.verdict.notes.join('\n');

test('the first analysis leaves a summary; analyze, report and compare then read it, not the CSV, to the same result', async () => {
  const { dir, csv } = await runDir();
  const first = await analyzePath(dir);
  assert.ok(existsSync(join(dir, CLIENT_SUMMARY_FILE)), 'the summary is written beside the CSV');
  assert.ok(first.analysis.table.length >= 4 && first.readStats.rows > 10_000);
  // The CSV becomes bytes no reader could parse, of the same size and modification time: only
  // an analysis that never opens it can still give the same figures.
  writeFileSync(csv, Buffer.alloc(statSync(csv).size, 'x'));
  utimesSync(csv, MTIME_S, MTIME_S);
  const second = await analyzePath(dir);
  assert.deepEqual(figures(second), figures(first));
  assert.doesNotMatch(notesOf(second), /client-summary/);
  // plateau report reads the per-second series from it.
  await rm(join(dir, 'report.html'));
  await writeReport([dir]);
  assert.match(await readFile(join(dir, 'report.html'), 'utf8'), /<html/);
  // plateau compare and confirm recompute a missing analysis.json from it.
  await rm(join(dir, 'analysis.json'));
  assert.deepEqual((await readRun(dir)).analysis, first.analysis);
});

/** What is done to a run directory after its first analysis, and what the note says of it. */
const STALE: [string, (dir: string, csv: string) => void, RegExp][] = [
  [
    'the CSV grew (rows appended after the summary was made)',
    (_, csv) => writeFileSync(csv, generatedCsv({ ...RUN, seed: 22, stepsPerSec: [20, 40, 60, 80, 100] })),
    /was not used, as it was made from k6\.csv of [\d,]+ bytes modified 2027-01-15T08:00:00\.000Z; the client file is now k6\.csv of [\d,]+ bytes/,
  ],
  [
    'the CSV was truncated',
    (_, csv) => truncateSync(csv, Math.floor(statSync(csv).size / 2)),
    /was not used, as it was made from k6\.csv of [\d,]+ bytes .*; the client file is now k6\.csv of [\d,]+ bytes/,
  ],
  [
    'the CSV was edited in place (same size, a new modification time)',
    (_, csv) => {
      const text = readFileSync(csv, 'utf8').replace(/,200,/g, ',503,');
      writeFileSync(csv, text);
    },
    /was not used, as it was made from k6\.csv of ([\d,]+) bytes modified 2027-01-15T08:00:00\.000Z; the client file is now k6\.csv of \1 bytes modified (?!2027)/,
  ],
  [
    'the summary was written by another version of plateau',
    (dir) =>
      rewriteSummary(dir, {
        header: (h) => h.replace(/"plateauVersion":"[^"]*"/, '"plateauVersion":"0.0.1"'),
      }),
    /was not used, as it was written by another version \(plateau 0\.0\.1, summary schema 1; this is plateau [^,]+, schema 1\)/,
  ],
  [
    'the summary is of a newer schema',
    (dir) => rewriteSummary(dir, { header: (h) => h.replace('"schemaVersion":1', '"schemaVersion":2') }),
    /was not used, as it was written by another version \(plateau [^,]+, summary schema 2;/,
  ],
  [
    "the summary's counts were edited",
    (dir) => rewriteSummary(dir, { pass: (p) => p.replace('"totalRequests":', '"totalRequests":1') }),
    /was not used, as its contents were changed after it was written/,
  ],
  [
    'the summary was cut short',
    (dir) =>
      truncateSync(
        join(dir, CLIENT_SUMMARY_FILE),
        Math.floor(statSync(join(dir, CLIENT_SUMMARY_FILE)).size / 2),
      ),
    /was not used, as it could not be read \(unexpected end of file\)/,
  ],
  [
    'the summary is not gzip',
    (dir) => writeFileSync(join(dir, CLIENT_SUMMARY_FILE), '{"kind":"plateau.client-summary"}\n'),
    /was not used, as it could not be read \(incorrect header check\)/,
  ],
  [
    "the summary's contents are not a pass this plateau wrote (its hash made to match)",
    (dir) =>
      rewriteSummary(dir, {
        pass: () => '{"windowSeconds":4,"anyTag":true,"totalRequests":"many"}',
        rehash: true,
      }),
    /was not used, as its contents are damaged \(totalRequests is not a number\)/,
  ],
];

/**
 * Rewrites the summary's header line and pass line; with `rehash` the header's hash is made to
 * match the new pass (so that only the shape checks can tell).
 */
function rewriteSummary(
  dir: string,
  edit: { header?: (text: string) => string; pass?: (text: string) => string; rehash?: boolean },
): void {
  const path = join(dir, CLIENT_SUMMARY_FILE);
  const text = gunzipSync(readFileSync(path)).toString('utf8');
  const newline = text.indexOf('\n');
  const pass = (edit.pass ?? ((p) => p))(text.slice(newline + 1).trimEnd());
  let header = (edit.header ?? ((h) => h))(text.slice(0, newline));
  if (edit.rehash) {
    const hash = createHash('sha256').update(pass).digest('hex');
    header = header.replace(/"passSha256":"[0-9a-f]+"/, `"passSha256":"${hash}"`);
  }
  writeFileSync(path, gzipSync(`${header}\n${pass}\n`));
}

for (const [what, damage, note] of STALE) {
  test(`${what}: the summary is ignored and rebuilt, with a note, and the figures are the CSV's`, async () => {
    const { dir, csv } = await runDir({ plain: true });
    await analyzePath(dir);
    damage(dir, csv);
    const rebuilt = await analyzePath(dir);
    assert.match(notesOf(rebuilt), note);
    assert.match(await readFile(join(dir, 'record.txt'), 'utf8'), /client-summary\.json\.gz was not used/);
    // What the rebuilt analysis says is what the CSV says, read with no summary at all.
    const summary = await readFile(join(dir, CLIENT_SUMMARY_FILE));
    await rm(join(dir, CLIENT_SUMMARY_FILE));
    const fresh = await analyzePath(dir);
    const strip = (o: AnalysisOutput) => {
      const f = figures(o);
      f.analysis = {
        ...f.analysis,
        verdict: {
          ...f.analysis.verdict,
          notes: f.analysis.verdict.notes.filter((n) => !/client-summary/.test(n)),
        },
      };
      f.record = f.record.replace(/.*client-summary\.json\.gz was not used.*\n?/g, '');
      return f;
    };
    assert.deepEqual(strip(rebuilt), strip(fresh));
    // The rebuilt summary stands for the CSV as it is now: used again, with nothing to say.
    await writeFile(join(dir, CLIENT_SUMMARY_FILE), summary);
    const again = await analyzePath(dir);
    assert.doesNotMatch(notesOf(again), /client-summary/);
    assert.deepEqual(figures(again), figures(fresh));
  });
}

/** A process that has ended: its pid names nobody. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

test('a run in progress (run.lock held by a live process) is refused with the reason; a stale lock or our own is not', async () => {
  const { dir } = await runDir();
  const lock = (pid: number) =>
    writeFile(
      join(dir, RUN_LOCK_FILE),
      JSON.stringify({
        pid,
        host: hostname(),
        startedAt: '',
      }),
    );
  // The test runner that started this file is alive, and is not this process.
  await lock(process.ppid);
  const refused = (error: unknown) =>
    isPlateauError(error) &&
    /is a run in progress: its client file is still being written by plateau process \d+ on .* \(run\.lock\)/.test(
      error.message,
    ) &&
    /analyse it when that run has ended/.test(error.hint ?? '');
  await assert.rejects(analyzePath(dir), refused);
  await assert.rejects(writeReport([dir]), refused);
  assert.equal(existsSync(join(dir, CLIENT_SUMMARY_FILE)), false, 'no summary of a run in progress');
  assert.equal(existsSync(join(dir, 'analysis.json')), false);
  // The study analysing its own run as it ends holds the lock itself.
  await lock(process.pid);
  await analyzePath(dir);
  // A lock whose process is gone: nothing writes the files any more.
  await rm(join(dir, CLIENT_SUMMARY_FILE));
  await lock(await deadPid());
  await analyzePath(dir);
  assert.ok(existsSync(join(dir, CLIENT_SUMMARY_FILE)));
});

test('a client file that grows while it is read (a writer without a lock) is refused, and no summary is made of it', async () => {
  const { dir, csv } = await runDir({ plain: true, run: { ...RUN, holdSeconds: 20 } });
  // A real writer appending rows as fast as it can, as a generator does during a run.
  const writer: ChildProcess = spawn(
    process.execPath,
    [
      '-e',
      `const fs = require('node:fs');
       const row = 'vus,1800000000,1.000000,,,,,,,,,,,,,,,,\\n';
       fs.appendFileSync(process.argv[1], row);
       process.stdout.write('writing\\n');
       (function more() { fs.appendFileSync(process.argv[1], row); setImmediate(more); })();`,
      csv,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    await new Promise((resolve) => writer.stdout!.once('data', resolve));
    await assert.rejects(
      analyzePath(dir),
      (error: unknown) =>
        isPlateauError(error) &&
        /k6\.csv changed while it was read .*the run is still in progress/.test(error.message),
    );
    assert.equal(existsSync(join(dir, CLIENT_SUMMARY_FILE)), false);
  } finally {
    writer.kill();
  }
});

test('a truncated gzip is analysed to its last whole line, with a note, and so is its summary', async () => {
  const { dir, csv } = await runDir();
  await rm(join(dir, 'run.json')); // a bare k6 run: nothing says it ended early
  const whole = readFileSync(csv);
  truncateSync(csv, whole.length - 2000);
  // An independent count: what gunzip gives of the cut file, whole lines only.
  const text = gunzipSync(readFileSync(csv), {
    finishFlush: constants.Z_SYNC_FLUSH,
  }).toString('utf8');
  const wholeLines = text.slice(0, text.lastIndexOf('\n')).split('\n');
  const requests = wholeLines.filter((line) => line.startsWith('http_reqs,')).length;
  assert.ok(requests > 100 && text.length > text.lastIndexOf('\n') + 1, 'the cut falls mid-row');
  for (const pass of ['from the CSV', 'from the summary']) {
    const output = await analyzePath(dir);
    assert.equal(
      output.analysis.table.reduce((sum, row) => sum + row.requests, 0),
      requests,
      `${pass}: every whole row's request, none of the cut one`,
    );
    assert.match(
      notesOf(output),
      /k6\.csv\.gz: unexpected end of file: the file ends mid-stream .* it was read to its last whole line/,
      pass,
    );
  }
});
