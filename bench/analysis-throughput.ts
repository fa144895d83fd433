// Benchmark: how fast analysis streams a large k6 CSV, against a floor of reading the same
// file line by line without parsing, and its peak memory.
//
//   node --import tsx bench/analysis-throughput.ts [rows=3000000] [gz=1]
//
// A 10-minute run at 2,000 requests/s is about 12 million rows (9 per request plus 4 per
// iteration); pass 12000000 to measure that size (it needs ~2 GB of disk uncompressed).
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip, createGzip } from 'node:zlib';
import { analyze } from '../analysis/analyze-run.ts';

const rows = Number(process.argv[2] ?? 3_000_000);
const gz = (process.argv[3] ?? '1') === '1';
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
    const t = 1_800_000_000 + Math.floor(request / 2000);
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

try {
  process.stderr.write(`generating ${rows.toLocaleString()} rows…\n`);
  await generate();
  const bytes = (await stat(file)).size;
  let t = performance.now();
  const lineCount = await floor();
  const floorS = (performance.now() - t) / 1000;
  const rssBefore = process.memoryUsage().rss;
  t = performance.now();
  const result = await analyze({ clientFile: file });
  const analyzeS = (performance.now() - t) / 1000;
  const peakMb = Math.round(process.resourceUsage().maxRSS / 1024);
  process.stdout.write(
    `${JSON.stringify(
      {
        rows,
        gzip: gz,
        fileMb: Math.round(bytes / 1_048_576),
        floorRowsPerSec: Math.round(lineCount / floorS),
        analyzeRowsPerSec: Math.round(result.readStats.rows / analyzeS),
        analyzeSeconds: Math.round(analyzeS * 10) / 10,
        steps: result.analysis.table.length,
        peakRssMb: peakMb,
        rssBeforeAnalyzeMb: Math.round(rssBefore / 1_048_576),
        node: process.version,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
