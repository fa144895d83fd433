// Benchmark: what the engine's file outputs cost per request, in CPU µs (gzip included).
//
// Each output runs in a process of its own (so V8 optimizes it alone, as in a test), fed
// the samples the engine makes per request: a request's nine http_req* samples and an
// iteration's four, each event with a tags object of its own, as at 10,000 requests/s.
// A first pass warms the code up; the second is measured with process.cpuUsage(), which
// counts every thread of the process, zlib's included.
//
//   npm run bench:outputs -- [requests=300000]
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HTTP_TIMING_METRICS } from '../engine/metrics/builtin.ts';
import { Metric, type SampleContainer } from '../engine/metrics/metric.ts';
import { CsvOutput } from '../engine/output/csv.ts';
import { JsonOutput } from '../engine/output/json.ts';
import type { Output } from '../engine/output/output.ts';

const KINDS = ['csv', 'csv.gz', 'json.gz'] as const;
type Kind = (typeof KINDS)[number];

/** A request's samples, in the order the engine emits them. */
const REQUEST_METRICS = ['http_reqs', ...HTTP_TIMING_METRICS, 'http_req_failed'].map(
  (name) => new Metric(name, 'trend', 'time'),
);
const ITERATION_METRICS = ['data_sent', 'data_received', 'iteration_duration', 'iterations'].map(
  (name) => new Metric(name, 'trend', 'time'),
);

/** The events of `count` requests from `first` on, 10,000 a second, in batches as the engine flushes. */
function* batches(first: number, count: number): Generator<SampleContainer[]> {
  let batch: SampleContainer[] = [];
  for (let i = first; i < first + count; i++) {
    const timeMs = 1_700_000_000_000 + i / 10;
    const url = 'http://127.0.0.1:8080/statements?account=42';
    batch.push({
      timeMs,
      tags: {
        expected_response: 'true',
        group: '',
        method: 'GET',
        name: url,
        proto: 'HTTP/1.1',
        scenario: 'steps',
        status: '200',
        url,
        step: `r${(i >> 14) % 8}`,
      },
      metrics: REQUEST_METRICS,
      values: [1, 0.5 + (i % 97) * 0.0123457, 0.0021, 0, 0, 0.0123, 0.4712345, 0.0345678, 0],
    });
    batch.push({
      timeMs,
      tags: { group: '', scenario: 'steps', step: `r${(i >> 14) % 8}` },
      metrics: ITERATION_METRICS,
      values: [112, 90_213, 0.7123456 + (i % 13) * 0.01, 1],
    });
    if (batch.length >= 1024) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

async function runChild(kind: Kind, requests: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-bench-outputs-'));
  try {
    const file = join(dir, `out.${kind}`);
    const output: Output = kind.startsWith('csv')
      ? new CsvOutput({ fileName: file, saveIntervalMs: 1000, timeFormat: 'unix' })
      : new JsonOutput(file);
    await output.start();
    let before = process.cpuUsage();
    for (let pass = 0; pass < 2; pass++) {
      if (pass === 1) before = process.cpuUsage();
      let n = 0;
      for (const batch of batches(pass * requests, requests)) {
        output.addMetricSamples(batch);
        // Let the file and zlib keep up, as the engine's event loop would.
        if (++n % 16 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    }
    await output.stop();
    const used = process.cpuUsage(before);
    process.stdout.write(
      `${JSON.stringify({ kind, cpuUsPerRequest: (used.user + used.system) / requests })}\n`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'child') {
  await runChild(process.argv[3] as Kind, Number(process.argv[4]));
} else {
  const requests = Number(process.argv[2] ?? 300_000);
  const self = fileURLToPath(import.meta.url);
  const results = KINDS.map((kind) => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', self, 'child', kind, String(requests)], {
      encoding: 'utf8',
    });
    if (child.status !== 0) throw new Error(`${kind}: ${child.stderr}`);
    const result = JSON.parse(child.stdout.trim()) as { kind: Kind; cpuUsPerRequest: number };
    return {
      output: kind,
      rowsPerRequest: 13,
      cpuUsPerRequest: Math.round(result.cpuUsPerRequest * 100) / 100,
    };
  });
  console.log(JSON.stringify({ requests, results }, null, 2));
}
