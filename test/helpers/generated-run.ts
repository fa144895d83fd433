// A stepped run's k6 CSV and run.json, made up deterministically from a seed: every row kind
// k6 and the engine write, every status class analysis counts, and the awkward bytes real
// files hold (quoted fields, a line break inside a quote, CRLF, NUL blocks), so that tests can
// compare two ways of reading the same file.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { seededRandom } from '../../lib/seeded-random.ts';

export const K6_HEADER =
  'metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata';

/** What the generated run looks like. */
export interface GeneratedRun {
  seed: number;
  /** Offered rate of each step, requests/s; a drain and a recovery at the last rate / 4 follow. */
  stepsPerSec: number[];
  holdSeconds: number;
  /** Milliseconds in the stamps (the engine's, and unix_milli) rather than whole seconds (k6's default). */
  msStamps: boolean;
  /** Requests carry no step tag (rows are per scenario and time window). */
  untagged?: boolean;
  /** Quoted check names, a line break in a quoted field, CRLF line ends, a NUL block. */
  awkward?: boolean;
  /** Rows after the last, cut mid-row: the partly written end of a killed writer. */
  cutMidRow?: boolean;
}

/** Rate the made-up service serves before it queues and sheds, requests/s. */
const CAPACITY_PER_SEC = 45;

interface Row {
  atMs: number;
  text: string;
}

/** The run's CSV text (without gzip). Start: 2027-01-15T08:00:00Z. */
export function generatedCsv(run: GeneratedRun): string {
  const rnd = seededRandom(run.seed);
  const startMs = 1_800_000_000_000;
  const rows: Row[] = [];
  const stamp = (ms: number) => (run.msStamps ? String(Math.floor(ms)) : String(Math.floor(ms / 1000)));
  const steps = [
    ...run.stepsPerSec.map((rate) => ({ tag: `r${String(rate).padStart(3, '0')}`, rate })),
    { tag: 'drain', rate: Math.max(1, Math.round(run.stepsPerSec.at(-1)! / 4)) },
    { tag: 'recovery', rate: Math.max(1, Math.round(run.stepsPerSec.at(-1)! / 4)) },
  ];
  let stepStartMs = startMs;
  let request = 0;
  for (const step of steps) {
    const over = Math.max(0, step.rate - CAPACITY_PER_SEC);
    for (let i = 0; i < step.rate * run.holdSeconds; i++) {
      const sentMs = stepStartMs + (i * 1000) / step.rate + rnd() * 3;
      const roll = rnd();
      // Past capacity the queue grows: latency rises and the service sheds and expires.
      let status = 200;
      let error = '';
      let errorCode = '';
      if (roll < over / 200) status = 503;
      else if (roll < over / 150) status = 504;
      else if (roll < 0.004) status = 429;
      else if (roll < 0.007) status = 500;
      else if (roll < 0.009) status = 404;
      else if (roll < 0.0105) {
        status = 0;
        [error, errorCode] = rnd() < 0.5 ? ['request timeout', '1050'] : ['dial: i/o timeout', '1211'];
      }
      const durationMs =
        status === 0 && errorCode === '1050'
          ? 1000
          : 5 + rnd() * 20 + over * (5 + rnd() * 40) * (i / step.rate);
      const endMs = sentMs + durationMs;
      const scenario = request % 7 === 0 ? 'other' : 'capacity';
      const attempt = request % 11 === 0 ? '&attempt=2' : request % 5 === 0 ? '&attempt=1' : '';
      const extra = run.untagged ? attempt.slice(1) : `step=${step.tag}${attempt}`;
      const expected = status >= 200 && status < 400 ? 'true' : 'false';
      const http = (metric: string, value: number) =>
        `${metric},${stamp(endMs)},${value.toFixed(6)},,${error},${errorCode || (status >= 400 ? String(1000 + status) : '')},${expected},,GET,GET /s,HTTP/1.1,${scenario},,${status},,,GET /s,${extra},`;
      const lines = [
        http('http_reqs', 1),
        http('http_req_duration', durationMs),
        http('http_req_blocked', rnd() * 0.01),
        http('http_req_connecting', 0),
        http('http_req_tls_handshaking', 0),
        http('http_req_sending', 0.02),
        http('http_req_waiting', durationMs - 0.05),
        http('http_req_receiving', 0.03),
        http('http_req_failed', expected === 'true' ? 0 : 1),
      ];
      const checkName = run.awkward && request % 13 === 0 ? '"status is 200, or ""ok"""' : 'status is 200';
      lines.push(
        `checks,${stamp(endMs)},${status === 200 ? 1 : 0},${checkName},,,,,,,,${scenario},,,,,,${extra},`,
        `data_sent,${stamp(endMs)},120.000000,,,,,,,,,${scenario},,,,,,${extra},`,
        `data_received,${stamp(endMs)},300.000000,,,,,,,,,${scenario},,,,,,${extra},`,
        `iteration_duration,${stamp(endMs)},${(durationMs + 0.3).toFixed(6)},,,,,,,,,${scenario},,,,,,${extra},`,
        `iterations,${stamp(endMs)},1.000000,,,,,,,,,${scenario},,,,,,${extra},`,
      );
      rows.push({ atMs: endMs, text: lines.join('\n') });
      request++;
    }
    stepStartMs += run.holdSeconds * 1000;
  }
  const endMs = stepStartMs;
  for (let ms = startMs; ms < endMs; ms += 1000) {
    const vus = Math.round(5 + rnd() * 20);
    rows.push({ atMs: ms + 1, text: `vus,${stamp(ms + 1)},${vus}.000000,,,,,,,,,,,,,,,,` });
    rows.push({ atMs: ms + 1, text: `vus_max,${stamp(ms + 1)},40.000000,,,,,,,,,,,,,,,,` });
    if (run.msStamps) {
      rows.push({
        atMs: ms + 2,
        text: `engine_lag_ms,${stamp(ms + 2)},${(rnd() * 4).toFixed(6)},,,,,,,,,,,,,,,,`,
      });
      rows.push({
        atMs: ms + 2,
        text: `engine_cpu_pct,${stamp(ms + 2)},${(20 + rnd() * 50).toFixed(6)},,,,,,,,,,,,,,,,`,
      });
    }
    if (rnd() < 0.1)
      rows.push({
        atMs: ms + 500,
        text: `dropped_iterations,${stamp(ms + 500)},1.000000,,,,,,,,,capacity,,,,,,,`,
      });
  }
  // k6 writes what each flush holds: nearly in time order, a few rows late.
  rows.sort((a, b) => a.atMs - b.atMs);
  for (let i = 0; i + 3 < rows.length; i += 97) [rows[i], rows[i + 3]] = [rows[i + 3]!, rows[i]!];
  let text = `${K6_HEADER}\n${rows.map((r) => r.text).join('\n')}\n`;
  if (run.awkward) {
    const lines = text.split('\n');
    // A group name holding a line break, as Go's encoding/csv quotes it.
    lines.splice(
      40,
      0,
      `group_duration,${stamp(startMs + 900)},12.000000,,,,,"::login\nstep two",,,,capacity,,,,,,,`,
    );
    // A block of NULs, as a k6 killed while its file system preallocated leaves.
    lines[60] = `${lines[60]}${'\0'.repeat(300)}`;
    text = lines.join('\r\n');
  }
  if (run.cutMidRow) text += `http_reqs,${stamp(endMs)},1.000000,,,,true,,GET,GET /s,HTTP/1`;
  return text;
}

/** The run.json of a generated run (a completed study, unless `status` says otherwise). */
export function generatedManifest(
  run: GeneratedRun,
  id: string,
  status: 'completed' | 'failed' | 'running' = 'completed',
): Record<string, unknown> {
  const last = run.stepsPerSec.at(-1)!;
  return {
    kind: 'plateau.run',
    schemaVersion: 2,
    id,
    status,
    startedAt: '2027-01-15T08:00:00.000Z',
    endedAt: status === 'running' ? null : '2027-01-15T08:10:00.000Z',
    config: {},
    load: {
      script: 'capacity',
      stepsPerSec: run.stepsPerSec,
      holdSeconds: run.holdSeconds,
      rampSeconds: 1,
      recoveryRatePerSec: Math.max(1, Math.round(last / 4)),
      recoverySeconds: 2 * run.holdSeconds,
      jitterSeconds: 0,
      p95Ms: 250,
      failRate: 0.01,
    },
    service: null,
    target: 'http://127.0.0.1:1',
    engine: { name: 'embedded', version: 'test' },
    database: null,
    versions: { node: process.version, plateau: 'test', gitCommit: null },
    machine: { cpus: 2, memoryMb: 1024, platform: 'linux' },
    reachedStep: 'recovery',
    ...(status === 'failed'
      ? { ended: { reason: 'service-died', detail: 'the service died', atStep: 'recovery' } }
      : {}),
    exitCode: status === 'completed' ? 0 : null,
    warnings: [],
  };
}

/**
 * Writes a generated run into `dir`: its client file (`k6.csv.gz` when `gzip`, else
 * `k6.csv`) and, unless `manifest` is false, run.json. Returns the client file's path.
 */
export function writeGeneratedRun(
  dir: string,
  run: GeneratedRun,
  options: { gzip: boolean; manifest?: false | 'completed' | 'failed' | 'running' },
): string {
  const text = generatedCsv(run);
  const file = join(dir, options.gzip ? 'k6.csv.gz' : 'k6.csv');
  writeFileSync(file, options.gzip ? gzipSync(text, { level: 1 }) : text);
  if (options.manifest !== false)
    writeFileSync(
      join(dir, 'run.json'),
      `${JSON.stringify(generatedManifest(run, `gen-${run.seed}`, options.manifest ?? 'completed'), null, 2)}\n`,
    );
  return file;
}
