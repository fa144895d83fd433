// The byte reader hands on exactly what the line-by-line reader it replaced did: the same
// samples in the same order and the same counts, on every real k6 file, on generated runs, on
// every awkward line we know of, and however the text is cut into chunks.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { test } from 'node:test';
import { parse as parseSync } from 'csv-parse/sync';
import { seededRandom } from '../lib/seeded-random.ts';
import { generatedCsv, K6_HEADER } from '../test/helpers/generated-run.ts';
import { k6RealFixtures } from '../test/helpers/shared-fixtures.ts';
import { type ClientSample, extraTag, parseTimestamp, type ReadStats } from './client-sample.ts';
import { CLIENT_METRICS } from './client-steps.ts';
import { readK6Csv } from './k6-csv.ts';

/**
 * The reader as it was before it read bytes (readline, a comma split, csv-parse for quotes),
 * kept as the reference: any way the byte reader differs from it is a bug in the byte reader.
 */
async function referenceRead(
  input: Readable,
  onSample: (sample: ClientSample) => void,
  metrics?: ReadonlySet<string>,
): Promise<ReadStats> {
  class StripNul extends Transform {
    removed = 0;
    override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
      const kept = Buffer.from(chunk.filter((byte) => byte !== 0));
      this.removed += chunk.length - kept.length;
      done(null, kept);
    }
  }
  const split = (line: string): string[] | undefined => {
    if (!line.includes('"')) return line.split(',');
    try {
      return (parseSync(line, { relax_column_count: true }) as string[][])[0];
    } catch {
      return undefined;
    }
  };
  const stats: ReadStats = { rows: 0, skipped: 0, nulBytes: 0 };
  const strip = new StripNul();
  const lines = createInterface({ input: input.pipe(strip), crlfDelay: Number.POSITIVE_INFINITY });
  let columns: Map<string, number> | undefined;
  let pending = '';
  for await (const raw of lines) {
    const line = pending === '' ? raw : `${pending}\n${raw}`;
    if (line.includes('"') && (line.match(/"/g)?.length ?? 0) % 2 === 1) {
      pending = line;
      continue;
    }
    pending = '';
    if (line === '') continue;
    if (
      columns &&
      metrics &&
      columns.get('metric_name') === 0 &&
      !metrics.has(line.slice(0, line.indexOf(',')))
    ) {
      stats.rows++;
      continue;
    }
    const record = split(line);
    if (!record) {
      stats.skipped++;
      continue;
    }
    if (!columns) {
      columns = new Map(record.map((name, i) => [name, i]));
      continue;
    }
    const at = (name: string) => {
      const k = columns!.get(name);
      const v = k === undefined ? undefined : record[k];
      return v === '' ? undefined : v;
    };
    const metric = record[columns.get('metric_name')!];
    const value = Number(record[columns.get('metric_value')!]);
    const timeS = parseTimestamp(record[columns.get('timestamp')!] ?? '');
    if (!metric || !Number.isFinite(value) || !Number.isFinite(timeS)) {
      stats.skipped++;
      continue;
    }
    stats.rows++;
    const extra = at('extra_tags');
    onSample({
      metric,
      timeS,
      value,
      status: at('status'),
      errorCode: at('error_code'),
      scenario: at('scenario'),
      step: (extra === undefined ? undefined : extraTag(extra, 'step')) ?? at('step'),
      attempt: extra === undefined ? undefined : extraTag(extra, 'attempt'),
    });
  }
  if (pending !== '') stats.skipped++;
  stats.nulBytes = strip.removed;
  return stats;
}

/** `bytes` as a stream of pieces: whole, in 64 KiB pieces, or cut at random (1 byte to 3 KiB). */
function chunked(bytes: Buffer, how: 'whole' | 'blocks' | 'random', seed = 1): Readable {
  if (how === 'whole') return Readable.from([bytes]);
  const pieces: Buffer[] = [];
  const rnd = seededRandom(seed);
  for (let at = 0; at < bytes.length; ) {
    const size = how === 'blocks' ? 65_536 : 1 + Math.floor(rnd() ** 3 * 3000);
    pieces.push(bytes.subarray(at, at + size));
    at += size;
  }
  return Readable.from(pieces);
}

async function read(
  reader: typeof referenceRead,
  bytes: Buffer,
  how: 'whole' | 'blocks' | 'random',
  metrics: ReadonlySet<string> | undefined,
): Promise<{ stats: ReadStats; samples: ClientSample[] }> {
  const samples: ClientSample[] = [];
  const stats = await reader(chunked(bytes, how), (s) => samples.push(s), metrics);
  return { stats, samples };
}

const byteReader: typeof referenceRead = (input, onSample, metrics) =>
  readK6Csv(input, onSample, { ...(metrics ? { metrics } : {}), emptyOk: true });

/** Reads `bytes` both ways, with and without the metrics filter, in every chunking, and compares. */
async function assertSameAsReference(bytes: Buffer, label: string): Promise<void> {
  for (const metrics of [CLIENT_METRICS, undefined]) {
    const expected = await read(referenceRead, bytes, 'whole', metrics);
    for (const how of ['whole', 'blocks', 'random'] as const) {
      const got = await read(byteReader, bytes, how, metrics);
      const what = `${label}, ${metrics ? "analysis's metrics" : 'every metric'}, ${how}`;
      assert.deepEqual(got.stats, expected.stats, what);
      assert.equal(got.samples.length, expected.samples.length, what);
      // deepStrictEqual: -0 is not 0, a missing tag is not an empty one.
      for (let i = 0; i < got.samples.length; i++)
        assert.deepStrictEqual(got.samples[i], expected.samples[i], `${what}: sample ${i}`);
    }
  }
}

const FIXTURES = k6RealFixtures();
for (const file of readdirSync(FIXTURES).filter((f) => f.endsWith('.csv'))) {
  test(`real k6 ${file}: the same samples and counts as the line reader`, async () => {
    await assertSameAsReference(readFileSync(`${FIXTURES}${file}`), file);
  });
}

test('generated runs (stamps in seconds and in ms, untagged, quoted, CRLF, NULs): the same as the line reader', async () => {
  const runs = [
    { seed: 11, stepsPerSec: [20, 60], holdSeconds: 3, msStamps: true },
    { seed: 12, stepsPerSec: [20, 60], holdSeconds: 3, msStamps: false, untagged: true },
    { seed: 13, stepsPerSec: [30, 70], holdSeconds: 3, msStamps: true, awkward: true, cutMidRow: true },
  ];
  for (const run of runs) await assertSameAsReference(Buffer.from(generatedCsv(run)), `seed ${run.seed}`);
});

const http = (
  fields: Partial<Record<'metric' | 'stamp' | 'value' | 'status' | 'scenario' | 'extra', string>>,
) =>
  `${fields.metric ?? 'http_reqs'},${fields.stamp ?? '1800000000'},${fields.value ?? '1.000000'},,,,true,,GET,GET /s,HTTP/1.1,${fields.scenario ?? 'capacity'},,${fields.status ?? '200'},,,GET /s,${fields.extra ?? 'step=r010'},`;

const AWKWARD_LINES: [string, string][] = [
  // what the line tests, the text after the header
  [
    'values in every form Number() reads',
    [
      '1e3',
      '',
      ' 5',
      '-0',
      '-0.000000',
      '.5',
      '-.5',
      '1.',
      '.',
      '-',
      '+2',
      '007.250000',
      '0x10',
      'NaN',
      'Infinity',
      '123456789012345678.5',
      '0.1234567890123456789012345',
      '9007199254740993',
      '221.899000',
    ]
      .map((value) => http({ metric: 'http_req_duration', value }))
      .join('\n'),
  ],
  [
    'stamps: seconds, ms, µs, ns, RFC 3339, empty, junk',
    [
      '1800000000',
      '1800000000123',
      '1800000000123456',
      '1800000000123456789',
      '2027-01-15T08:00:00.5+01:00',
      '',
      'x1',
    ]
      .map((stamp) => http({ stamp }))
      .join('\n'),
  ],
  [
    'CR line ends: CRLF, a CR alone, CRs together',
    `${http({})}\r\n${http({ status: '503' })}\r${http({ status: '504' })}\r\r\n\r${http({})}`,
  ],
  [
    'CRLF after the tags (a row without its metadata column)',
    `${http({}).slice(0, -1)}\r\n${http({ extra: 'step=r020' }).slice(0, -1)}\r\n`,
  ],
  ['empty lines and a line of spaces', `${http({})}\n\n\n   \n${http({})}`],
  [
    'lines without a comma, one a wanted name and one character',
    'http_reqs\nhttp_reqsX\nvus_max1\nvusX\nv\nhttp_req_durationZ',
  ],
  [
    'a wanted name as a prefix, and names of other metrics',
    `${http({ metric: 'http_reqs_total' })}\n${http({ metric: 'http_req' })}\n${http({ metric: 'vus_maximum' })}\n${http({ metric: 'checks' })}`,
  ],
  [
    'quoted fields: a comma, a doubled quote, a line break, an empty line, an unclosed quote at the end',
    `${http({ scenario: '"a,b"' })}\n${http({ extra: '"step=r020&x=""y"""' })}\ngroup_duration,1800000000,1.0,,,,,"::g\n\nh",,,,capacity,,,,,,,\n${http({ scenario: '"never closed' })}\n${http({})}`,
  ],
  [
    'multibyte text in tags and scenarios',
    `${http({ scenario: 'süd-østen', extra: 'step=r010&name=日本' })}\n${http({ scenario: 'süd-østen' })}`,
  ],
  [
    'fewer fields than the header, and more',
    `http_reqs,1800000000,1.0,,,,true\nhttp_reqs,1800000000,1.0\n${http({})},extra,fields,at,the,end`,
  ],
  [
    'tags repeating then changing (what the byte reader reuses)',
    [
      http({}),
      http({}),
      http({ status: '500' }),
      http({ status: '500', extra: 'step=r010&attempt=2' }),
      http({ extra: 'step=r010&attempt=2' }),
      http({ extra: '' }),
      http({ extra: 'attempt=1' }),
      http({ scenario: '' }),
    ].join('\n'),
  ],
];

for (const [what, body] of AWKWARD_LINES) {
  test(`${what}: the same as the line reader`, async () => {
    await assertSameAsReference(Buffer.from(`${K6_HEADER}\n${body}\n`), what);
    await assertSameAsReference(Buffer.from(`${K6_HEADER}\n${body}`), `${what}, no final line break`);
  });
}

test('a header in another order (metric_name not first), with a step column: the same as the line reader', async () => {
  const header = 'timestamp,metric_value,metric_name,status,step,scenario';
  const body = [
    '1800000000,12.5,http_req_duration,200,r010,s',
    '1800000001,1,http_reqs,503,,s',
    '1800000001,1,vus,,,',
  ].join('\n');
  await assertSameAsReference(Buffer.from(`${header}\n${body}\n`), 'reordered header');
});

test('a file that is not k6 CSV is refused as before; an empty one is no samples with emptyOk', async () => {
  await assert.rejects(
    readK6Csv(Readable.from([Buffer.from('a,b,c\n1,2,3\n')]), () => undefined),
    /is not k6 CSV output/,
  );
  await assert.rejects(
    readK6Csv(Readable.from([]), () => undefined, { name: 'x.csv' }),
    /x\.csv is empty/,
  );
  assert.deepEqual(await readK6Csv(Readable.from([]), () => undefined, { emptyOk: true }), {
    rows: 0,
    skipped: 0,
    nulBytes: 0,
  });
});
