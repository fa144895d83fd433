import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { constants, deflateRawSync, gzipSync } from 'node:zlib';
import { openText } from '../../analysis/client-files.ts';
import { joinOutputParts } from './output-parts.ts';

/** The text of a file as analysis reads it (gunzip for .gz, to the last whole line). */
async function read(path: string): Promise<string> {
  let text = '';
  for await (const piece of await openText(path)) text += String(piece);
  return text;
}

/**
 * A gzip stream cut where a killed worker's would be: a member's header and every row
 * flushed (Z_SYNC_FLUSH, as the CSV output does at each save), then half a row, no end.
 */
function cutGzip(whole: string, partLine: string): Buffer {
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
  const body = deflateRawSync(whole, { finishFlush: constants.Z_SYNC_FLUSH });
  const rest = deflateRawSync(partLine, { finishFlush: constants.Z_SYNC_FLUSH });
  return Buffer.concat([header, body, rest]);
}

test('gzip parts join into one file analysis reads whole; a dead worker’s part ends at its last whole line', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'parts-'));
  const [zero, one, two] = ['k6.csv.gz', 'k6.part1.csv.gz', 'k6.part2.csv.gz'].map((n) => join(dir, n));
  await writeFile(zero!, gzipSync('metric_name,timestamp\nhttp_reqs,1\n'));
  await writeFile(one!, gzipSync('http_reqs,2\nhttp_reqs,3\n'));
  await writeFile(two!, cutGzip('http_reqs,4\n', 'http_reqs,5'));
  await joinOutputParts([
    { path: zero!, whole: true },
    { path: one!, whole: true },
    { path: two!, whole: false },
    { path: join(dir, 'k6.part3.csv.gz'), whole: false }, // a worker that died before writing
  ]);
  assert.equal(
    await read(zero!),
    'metric_name,timestamp\nhttp_reqs,1\nhttp_reqs,2\nhttp_reqs,3\nhttp_reqs,4\n',
  );
  assert.deepEqual(await readdir(dir), ['k6.csv.gz'], 'the parts are gone');
});

test('when worker 0 died its own file is cut to whole lines before the others join it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'parts-'));
  const [zero, one] = ['k6.csv.gz', 'k6.part1.csv.gz'].map((n) => join(dir, n));
  await writeFile(zero!, cutGzip('metric_name,timestamp\nhttp_reqs,1\n', 'http_req'));
  await writeFile(one!, gzipSync('http_reqs,2\n'));
  await joinOutputParts([
    { path: zero!, whole: false },
    { path: one!, whole: true },
  ]);
  assert.equal(await read(zero!), 'metric_name,timestamp\nhttp_reqs,1\nhttp_reqs,2\n');
});

test('plain parts join byte for byte; a dead worker’s last line without its newline is dropped', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'parts-'));
  const [zero, one, two] = ['out.ndjson', 'out.part1.ndjson', 'out.part2.ndjson'].map((n) => join(dir, n));
  await writeFile(zero!, '{"a":1}\n');
  await writeFile(one!, '{"a":2}\n{"a":3');
  await writeFile(two!, '{"a":4}\n');
  await joinOutputParts([
    { path: zero!, whole: true },
    { path: one!, whole: false },
    { path: two!, whole: true },
  ]);
  assert.equal(await readFile(zero!, 'utf8'), '{"a":1}\n{"a":2}\n{"a":4}\n');
});
