import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunManifest, SaturationRow } from '../contract/index.ts';
import { endedNotes, type RunNotesInputs, runNotes } from './run-notes.ts';
import { rateRow } from './verdict/test-rows.ts';

/** A run.json that planned 20, 40 and 60/s with a 2 s ramp: only what runNotes reads. */
const MANIFEST = { load: { stepsPerSec: [20, 40, 60], rampSeconds: 2 } } as unknown as RunManifest;

/** A clean run: planned steps of 20 s each, tagged, read whole, clocks agreeing, nothing to note. */
function inputs(overrides: Partial<RunNotesInputs> = {}): RunNotesInputs {
  return {
    rows: [rateRow(20, 20), rateRow(40, 40), rateRow(60, 60)],
    manifest: MANIFEST,
    client: { tagged: true, totalRequests: 2400 },
    readStats: { rows: 2400, skipped: 0, nulBytes: 0 },
    clockOffsetS: 0.02,
    steady: false,
    summaryRequests: 2400,
    ended: false,
    ...overrides,
  };
}

test('a clean run read whole has nothing to note', () => {
  assert.deepEqual(runNotes(inputs()), []);
});

test('each thing the reader of the record must know of how the files were read is one note', () => {
  const byTag: SaturationRow = { ...rateRow(40, 40), servedBasis: 'tag' };
  const cases: { says: string; inputs: Partial<RunNotesInputs>; note: RegExp }[] = [
    // The server's clock 2.46 s ahead of the client's: said to a tenth.
    {
      says: 'clock offset',
      inputs: { clockOffsetS: 2.46 },
      note: /^the client's and the server's clocks differ by about 2\.5 s/,
    },
    // Behind by as much counts too.
    { says: 'clock behind', inputs: { clockOffsetS: -1.2 }, note: /clocks differ by about -1\.2 s/ },
    // A step placed by its tag, for want of a window.
    { says: 'served by tag', inputs: { rows: [rateRow(20, 20), byTag] }, note: /^some steps have no window/ },
    // A 2 s step is a transient.
    {
      says: 'short steps',
      inputs: { rows: [rateRow(20, 20, { seconds: 2 }), rateRow(40, 40)] },
      note: /^steps shorter than 3 s \(r020\) cannot settle/,
    },
    // The jittered run's own notes, then the run quoted.
    {
      says: 'jittered run quoted',
      inputs: { jittered: { notes: [], quotedFromRun: 'r-jit' } },
      note: /^the safe limit quoted is that of jittered run r-jit \(real arrivals cluster\)$/,
    },
    {
      says: 'jittered run not quoted',
      inputs: {
        jittered: {
          notes: ['jittered run r-jit has no safe limit: none is quoted from it'],
          quotedFromRun: null,
        },
      },
      note: /^jittered run r-jit has no safe limit/,
    },
    // k6's summary counted 2500, the file holds 2400: cut short.
    {
      says: 'cut short',
      inputs: { summaryRequests: 2500 },
      note: /holds 2400 of the 2500 requests k6's summary counted: it was cut short$/,
    },
    // The same in a run that ended early: the rest were in its last second or never written.
    {
      says: 'ended early',
      inputs: { summaryRequests: 2500, ended: true },
      note: /holds 2400 of the 2500 requests .*: the others were in the second the run ended in \(left out\) or were never written$/,
    },
    // Nothing in the file.
    {
      says: 'no samples',
      inputs: { client: { tagged: false, totalRequests: 0 }, summaryRequests: undefined },
      note: /^the file holds no http_reqs samples: nothing to analyse$/,
    },
    // Requests without a step tag.
    {
      says: 'untagged',
      inputs: { client: { tagged: false, totalRequests: 2400 } },
      note: /^requests carry no step tag/,
    },
    // A gzip file cut short in a run that completed (or a bare file): read to its last whole line.
    {
      says: 'gzip cut short',
      inputs: {
        readStats: { rows: 2400, skipped: 0, nulBytes: 0, cut: 'k6.csv.gz: unexpected end of file' },
      },
      note: /^k6\.csv\.gz: unexpected end of file: the file ends mid-stream .*; it was read to its last whole line$/,
    },
    // Damaged records and NUL bytes.
    {
      says: 'damaged',
      inputs: { readStats: { rows: 2400, skipped: 3, nulBytes: 512 } },
      note: /^the client file was damaged: 3 records skipped, 512 NUL bytes removed$/,
    },
    // --steady with run.json: the ramp's 2 s are left out.
    {
      says: 'steady',
      inputs: { steady: true },
      note: /^rates leave out the first 2 s \(ramp\) of each step \(--steady\)$/,
    },
    // A step at 80/s the manifest never planned.
    {
      says: 'foreign steps',
      inputs: { rows: [rateRow(20, 20), rateRow(80, 80)] },
      note: /^the client file has steps the manifest did not plan \(80\/s\): it may come from a different run$/,
    },
  ];
  for (const c of cases) {
    const notes = runNotes(inputs(c.inputs));
    assert.equal(notes.length, 1, `${c.says}: ${notes.join(' | ')}`);
    assert.match(notes[0]!, c.note, c.says);
  }
});

test("a gzip file cut short in a run that ended early is said once, among its ending's notes", () => {
  const cut = { rows: 2400, skipped: 0, nulBytes: 0, cut: 'k6.csv.gz: unexpected end of file' };
  assert.deepEqual(runNotes(inputs({ readStats: cut, ended: true })), []);
  assert.match(endedNotes(cut, undefined).join(' '), /ends mid-stream/);
});

test('without run.json the record says what was not known, and that --steady could not apply', () => {
  assert.deepEqual(runNotes(inputs({ manifest: undefined, steady: true })), [
    '--steady needs run.json (the ramp length): rates are over whole holds',
    'no run.json: service settings, objectives (default p95 < 250 ms, failures < 1%) and hold lengths were not known',
  ]);
});

test('the notes come in the order the record lists them', () => {
  const notes = runNotes(
    inputs({
      clockOffsetS: 3,
      rows: [rateRow(20, 20, { seconds: 2 }), rateRow(80, 80)],
      readStats: { rows: 2400, skipped: 1, nulBytes: 0 },
      summaryRequests: 2500,
    }),
  );
  assert.deepEqual(
    notes.map((n) => n.split(' ').slice(0, 4).join(' ')),
    [
      "the client's and the",
      'steps shorter than 3',
      'the client file holds',
      'the client file was',
      'the client file has',
    ],
  );
});

test('a run that ended early: the file read to its last whole line, and its last second left out', () => {
  assert.deepEqual(endedNotes({ rows: 10, skipped: 0, nulBytes: 0 }, undefined), []);
  assert.deepEqual(
    endedNotes(
      { rows: 10, skipped: 0, nulBytes: 0, cut: 'k6.csv.gz: unexpected end of file' },
      { second: 1_700_000_000, samples: 12 },
    ),
    [
      'k6.csv.gz: unexpected end of file: the file ends mid-stream (its writer was stopped before closing it); it was read to its last whole line',
      'the client data is analysed up to its last complete second: the 12 samples of 22:13:20 UTC, the second the run ended in, are left out',
    ],
  );
});
