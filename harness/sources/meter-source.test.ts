import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { MeterScrape } from '../../contract/index.ts';
import { isPlateauError } from '../../contract/index.ts';
import {
  checkSourceUrl,
  describeReadFailure,
  MeterLog,
  median,
  meterLogPath,
  readMeterLog,
  StatusTally,
} from './meter-source.ts';

const dir = await mkdtemp(join(tmpdir(), 'plateau-meter-log-'));
after(() => rm(dir, { recursive: true, force: true }));

const scrape = (atMs: number, value: number): MeterScrape => ({
  kind: 'plateau.meter-scrape',
  source: 'metrics http://127.0.0.1:1/metrics',
  atMs,
  samples: [{ name: 'hikaricp_connections_active', labels: { pool: 'orders' }, value }],
});

async function readAll(path: string): Promise<MeterScrape[]> {
  const scrapes: MeterScrape[] = [];
  for await (const s of readMeterLog(path)) scrapes.push(s);
  return scrapes;
}

test('the log keeps every scrape as one line and reads them back in order', async () => {
  const path = meterLogPath(await mkdtemp(join(dir, 'run-')));
  const log = new MeterLog(path);
  for (let i = 0; i < 3; i++) log.append(scrape(1000 + i, i));
  await log.close();
  assert.equal(log.error, null);
  assert.equal(log.written, 3);
  assert.equal((await readFile(path, 'utf8')).split('\n').length, 4, 'three lines and the final newline');
  assert.deepEqual(await readAll(path), [scrape(1000, 0), scrape(1001, 1), scrape(1002, 2)]);
});

test('a second log on the same file appends rather than replacing', async () => {
  const path = join(dir, 'append.ndjson');
  for (const at of [1, 2]) {
    const log = new MeterLog(path);
    log.append(scrape(at, at));
    await log.close();
  }
  assert.deepEqual(
    (await readAll(path)).map((s) => s.atMs),
    [1, 2],
  );
});

test('a last line cut off mid-write is skipped; the lines before it are read', async () => {
  const path = join(dir, 'truncated.ndjson');
  const whole = `${JSON.stringify(scrape(1, 1))}\n${JSON.stringify(scrape(2, 2))}\n`;
  await writeFile(path, `${whole}${JSON.stringify(scrape(3, 3)).slice(0, 40)}`);
  assert.deepEqual(
    (await readAll(path)).map((s) => s.atMs),
    [1, 2],
  );
});

test('a bad line before the last is an input error naming the line', async () => {
  const path = join(dir, 'corrupt.ndjson');
  await writeFile(path, `${JSON.stringify(scrape(1, 1))}\n{"kind":\n${JSON.stringify(scrape(3, 3))}\n`);
  await assert.rejects(
    readAll(path),
    (error) => isPlateauError(error) && /line 2 is not JSON/.test(error.message),
  );
});

test('records of another kind are passed over; a missing file is a run without meters', async () => {
  const path = join(dir, 'mixed.ndjson');
  await writeFile(path, `{"kind":"plateau.something-later"}\n\n${JSON.stringify(scrape(5, 5))}\n`);
  assert.deepEqual(
    (await readAll(path)).map((s) => s.atMs),
    [5],
  );
  assert.deepEqual(await readAll(join(dir, 'no-such-run', 'meters.ndjson')), []);
});

test('a full disk is recorded once and never thrown; later scrapes are counted as lost', async () => {
  // /dev/full answers every write with ENOSPC, as a full disk does.
  const log = new MeterLog('/dev/full');
  log.append(scrape(1, 1));
  await log.close();
  assert.match(log.error ?? '', /cannot write \/dev\/full: ENOSPC/);
  log.append(scrape(2, 2));
  log.append(scrape(3, 3));
  assert.equal(log.lost, 2);
  await log.close();
});

test('a run directory that does not exist is a recorded failure, not a throw', async () => {
  const log = new MeterLog(join(dir, 'gone', 'meters.ndjson'));
  log.append(scrape(1, 1));
  await log.close();
  assert.match(log.error ?? '', /ENOENT/);
});

test('failures read in words', () => {
  const cases: [unknown, { ms: number } | null, string][] = [
    // Our own deadline fired: undici only says it was aborted.
    [new Error('This operation was aborted'), { ms: 800 }, 'timed out after 800 ms'],
    [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
      null,
      'connection refused',
    ],
    // The socket's error as the cause of a wrapper.
    [Object.assign(new Error('fetch failed'), { cause: { code: 'ENOTFOUND' } }), null, 'host not found'],
    [
      Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
      null,
      'connection closed before the answer',
    ],
    [new Error('something odd'), null, 'read failed: something odd'],
  ];
  for (const [error, timedOut, words] of cases) assert.equal(describeReadFailure(error, timedOut), words);
});

test('median of read times', () => {
  assert.equal(median([]), null);
  assert.equal(median([3]), 3);
  assert.equal(median([5, 1, 3]), 3);
  // Even count: the mean of the middle two.
  assert.equal(median([4, 1, 2, 3]), 2.5);
});

test('a status lists the first 50 unrecognised names in order and the largest overflow', () => {
  const tally = new StatusTally();
  for (let i = 99; i >= 0; i--) tally.unrecognised(`m${String(i).padStart(3, '0')}`);
  tally.capped(100, 5);
  tally.capped(100, 20);
  tally.capped(100, 3);
  tally.fail('HTTP 500 Internal Server Error');
  tally.fail('connection refused');
  const status = tally.status('metrics x', 'metrics');
  assert.equal(status.unrecognised.length, 50);
  assert.equal(status.unrecognised[0], 'm000');
  assert.equal(status.unrecognised[49], 'm049');
  assert.deepEqual(status.seriesCapped, { cap: 100, dropped: 20 });
  assert.equal(status.firstError, 'HTTP 500 Internal Server Error');
  assert.equal(status.lastError, 'connection refused');
});

test('source URLs must be absolute http(s)', () => {
  assert.equal(checkSourceUrl('http://127.0.0.1:8080/metrics', '--metrics'), null);
  assert.match(
    checkSourceUrl('127.0.0.1:8080', '--metrics')?.message ?? '',
    /not an http\(s\) URL|not a URL/,
  );
  assert.match(checkSourceUrl('ftp://x/metrics', '--metrics')?.message ?? '', /not an http\(s\) URL/);
  assert.match(checkSourceUrl('/metrics', '--metrics')?.message ?? '', /not a URL/);
});
