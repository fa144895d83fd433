// Benchmark: how fast analysis reads a large k6 CSV the first time, against a floor of reading
// the same file line by line without parsing, how fast it analyses it again from the client
// summary the first analysis left, its peak memory, and what that makes of a nightly hour.
//
//   node --import tsx bench/analysis-throughput.ts [rows=3000000] [gz=1] [stamps=s|ms]
//
// The analyses run in a process of their own, as `plateau analyze` does: its peak memory is
// theirs, not the generator's or the floor's.
//
// Each request of the capacity script writes 13 rows: its 9 http_req* rows and the 4 of its
// iteration (data_sent, data_received, iteration_duration, iterations; k6-compat.md §1). The
// generated run sends 2,000 requests/s with whole-second stamps (k6's default; `ms`: the
// millisecond stamps the embedded engine writes), so 12,000,000 rows are 923,077 requests,
// 7.7 minutes of such a run (about 2 GB uncompressed).

import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createGunzip, createGzip, type ZlibOptions } from 'node:zlib';
import { analyze } from '../analysis/analyze-run.ts';
import { CLIENT_SUMMARY_FILE } from '../analysis/client-summary.ts';

/** Rows one request of the capacity script writes to k6's CSV (9 of the request, 4 of its iteration). */
const ROWS_PER_REQUEST = 13;
const REQUESTS_PER_SEC = 2000;
/** The nightly study the projection is for: an hour at 10,000 requests/s. */
const NIGHTLY = { requestsPerSec: 10_000, seconds: 3600 };

const seconds = (from: number) => (performance.now() - from) / 1000;
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** What the analysing process reports. */
interface Analyses {
  rows: number;
  firstS: number;
  againS: number;
  steps: number;
  summaryBytes: number;
  peakRssMb: number;
}

// `--analyse <file>`: the child that analyses the file twice, first from it and then from the
// summary the first analysis left beside it, and prints what it measured.
if (process.argv[2] === '--analyse') {
  const file = process.argv[3]!;
  const summaryFile = join(file, '..', CLIENT_SUMMARY_FILE);
  let t = performance.now();
  const first = await analyze({ clientFile: file, clientSummary: summaryFile });
  const firstS = seconds(t);
  t = performance.now();
  const again = await analyze({ clientFile: file, clientSummary: summaryFile });
  const againS = seconds(t);
  if (JSON.stringify(again.analysis) !== JSON.stringify(first.analysis))
    throw new Error('the analysis from the client summary differs from the first');
  const result: Analyses = {
    rows: first.readStats.rows,
    firstS,
    againS,
    steps: first.analysis.table.length,
    summaryBytes: (await stat(summaryFile)).size,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  process.stdout.write(JSON.stringify(result));
  process.exit(0);
}

const rows = Number(process.argv[2] ?? 3_000_000);
const gz = (process.argv[3] ?? '1') === '1';
const msStamps = process.argv[4] === 'ms';
// A run directory of its own: analysis leaves the client summary beside the client file.
const dir = await mkdtemp(join(tmpdir(), 'plateau-analysis-bench-'));
const file = join(dir, gz ? 'k6.csv.gz' : 'k6.csv');

async function generate(): Promise<void> {
  const out = createWriteStream(file);
  const sink = gz ? createGzip({ level: 1 }) : undefined;
  sink?.pipe(out);
  const target = sink ?? out;
  const write = (text: string) =>
    new Promise<void>((resolve) => (target.write(text) ? resolve() : target.once('drain', resolve)));
  await write(
    'metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n',
  );
  const metrics = [
    'http_reqs',
    'http_req_duration',
    'http_req_blocked',
    'http_req_connecting',
    'http_req_tls_handshaking',
    'http_req_sending',
    'http_req_waiting',
    'http_req_receiving',
    'http_req_failed',
    'data_sent',
    'data_received',
    'iteration_duration',
    'iterations',
  ];
  let chunk = '';
  for (let i = 0; i < rows; i++) {
    const request = Math.floor(i / metrics.length);
    const t = msStamps
      ? 1_800_000_000_000 + Math.floor((request * 1000) / REQUESTS_PER_SEC)
      : 1_800_000_000 + Math.floor(request / REQUESTS_PER_SEC);
    const step = `r${String(100 * (1 + Math.floor(request / 120_000))).padStart(3, '0')}`;
    const metric = metrics[i % metrics.length]!;
    const httpTags =
      i % metrics.length < 9
        ? `,,,,true,,GET,GET /statement,HTTP/1.1,capacity,,200,,,GET /statement,step=${step},`
        : `,,,,,,,,,capacity,,,,,,step=${step},`;
    chunk += `${metric},${t},${(50 + (i % 97) / 10).toFixed(6)}${httpTags}\n`;
    if (chunk.length > 1 << 20) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  await new Promise<void>((resolve) => {
    out.once('finish', () => resolve());
    target.end();
  });
}

/** The floor: the file read line by line (gunzip, readline), nothing parsed. */
async function floor(): Promise<number> {
  const source = createReadStream(file);
  const lines = createInterface({
    input: gz ? source.pipe(createGunzip()) : source,
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let n = 0;
  for await (const _ of lines) n++;
  return n;
}

/**
 * Inflating alone, as analysis inflates (32 KiB pieces, 256 KiB ahead; client-files.ts): what
 * bounds any reader of a .gz file.
 */
async function inflateOnly(): Promise<void> {
  const gunzip = createGunzip({ chunkSize: 1 << 15, readableHighWaterMark: 1 << 18 } as ZlibOptions);
  for await (const _ of createReadStream(file).pipe(gunzip));
}

try {
  process.stderr.write(`generating ${rows.toLocaleString()} rows…\n`);
  await generate();
  const bytes = (await stat(file)).size;
  let t = performance.now();
  const lineCount = await floor();
  const floorS = seconds(t);
  const analyses = JSON.parse(
    execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--analyse', file], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  ) as Analyses;
  t = performance.now();
  if (gz) await inflateOnly();
  const inflateS = seconds(t);
  const floorRowsPerSec = lineCount / floorS;
  const analyzeRowsPerSec = analyses.rows / analyses.firstS;
  // The hour: its rows at 13 a request; a first analysis scales with rows, one from the
  // summary with the run's seconds (the summary holds seconds and steps, not rows).
  const runSeconds = rows / ROWS_PER_REQUEST / REQUESTS_PER_SEC;
  const nightlyRows = NIGHTLY.requestsPerSec * NIGHTLY.seconds * ROWS_PER_REQUEST;
  process.stdout.write(
    `${JSON.stringify(
      {
        rows,
        gzip: gz,
        stamps: msStamps ? 'ms' : 's',
        fileMb: Math.round(bytes / 1_048_576),
        floorRowsPerSec: Math.round(floorRowsPerSec),
        ...(gz ? { inflateOnlyRowsPerSec: Math.round(lineCount / inflateS) } : {}),
        analyzeRowsPerSec: Math.round(analyzeRowsPerSec),
        analyzeSeconds: round(analyses.firstS),
        timesFloor: round(analyzeRowsPerSec / floorRowsPerSec, 2),
        reanalyzeSeconds: round(analyses.againS, 2),
        summaryKb: Math.round(analyses.summaryBytes / 1024),
        steps: analyses.steps,
        peakRssMb: analyses.peakRssMb,
        nightlyHour: {
          requestsPerSec: NIGHTLY.requestsPerSec,
          rows: nightlyRows,
          floorMinutes: round(nightlyRows / floorRowsPerSec / 60),
          analyzeMinutes: round(nightlyRows / analyzeRowsPerSec / 60),
          reanalyzeSeconds: round((analyses.againS * NIGHTLY.seconds) / runSeconds),
        },
        node: process.version,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
