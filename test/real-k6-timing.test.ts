// Where real k6 and the embedded engine must agree in time, not only in shape: the same
// arrival schedules at the target to the millisecond, and a small study's plateau within 10 %.
// Both are judged by the clock and by a CPU the generator must have, so this file runs with
// nothing beside it. Needs a real k6 (K6_BIN, shared/k6/k6 beside the checkout, or PATH);
// without one every test here is skipped with one line saying why, never counted as passed.
// test-run: solo
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { AnalysisResult, GeneratorCpuReport } from '../contract/index.ts';
import { plateau } from './helpers/cli.ts';
import { type EngineName, runEngine, useRealK6 } from './helpers/real-k6.ts';
import { SMALL_STUDY } from './helpers/small-study.ts';
import { startTestServer } from './helpers/test-server.ts';

const { k6, skip, dir, failure } = await useRealK6('real-k6-timing');

test('constant and ramping arrival rates: the same iterations, started at the same offsets at the target', {
  skip,
}, async () => {
  const server = await startTestServer();
  const script = join(dir, 'schedule.js');
  await writeFile(
    script,
    `import http from 'k6/http';
import exec from 'k6/execution';
export const options = { scenarios: {
  constant: { executor: 'constant-arrival-rate', rate: 40, timeUnit: '1s', duration: '1990ms', preAllocatedVUs: 10 },
  ramping: { executor: 'ramping-arrival-rate', startRate: 0, timeUnit: '1s', preAllocatedVUs: 10, startTime: '2s',
    stages: [{ target: 60, duration: '2s' }, { target: 60, duration: '1s' }, { target: 0, duration: '1s' }] },
} };
export default async function () {
  await http.asyncRequest('GET', '${server.url}/?i=' + exec.scenario.iterationInTest + '&s=' + exec.scenario.name);
}
`,
  );
  const offsets = async (engine: EngineName) => {
    server.requests.length = 0;
    const o = await runEngine(engine, k6!, script, [], await mkdtemp(join(dir, 'schedule-')));
    assert.equal(o.code, 0, failure(o));
    const byScenario: Record<string, Map<number, number>> = {};
    for (const r of server.requests) {
      const u = new URL(r.url, 'http://x');
      const s = u.searchParams.get('s')!;
      byScenario[s] ??= new Map();
      byScenario[s].set(Number(u.searchParams.get('i')), r.atMs);
    }
    return byScenario;
  };
  const embedded = await offsets('embedded');
  const real = await offsets('k6');
  // The two runs start at different moments: line them up by the median difference of the
  // same iteration's arrival, then judge how far each start is from its twin.
  const pairs: { scenario: string; d: number }[] = [];
  for (const scenario of ['constant', 'ramping']) {
    const a = embedded[scenario]!;
    const b = real[scenario]!;
    assert.equal(a.size, b.size, `${scenario}: iterations`);
    assert.ok(a.size > 50, `${scenario}: ${a.size} iterations`);
    // After each scenario's first second, as the benches do: its VUs open their connections then.
    const first = Math.min(...a.values());
    for (const [i, at] of a) if (b.has(i) && at - first >= 1000) pairs.push({ scenario, d: at - b.get(i)! });
  }
  const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y);
  const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!;
  // Within a scenario, after lining the two runs up on it: the schedules themselves.
  const shifts: Record<string, number> = {};
  for (const scenario of ['constant', 'ramping']) {
    const ds = pairs.filter((p) => p.scenario === scenario).map((p) => p.d);
    shifts[scenario] = median(ds);
    const off = sorted(ds.map((d) => Math.abs(d - shifts[scenario]!)));
    const p95 = off[Math.floor(off.length * 0.95)]!;
    assert.ok(
      median(off) <= 1,
      `${scenario}: median start difference ${median(off).toFixed(2)} ms (p95 ${p95.toFixed(1)})`,
    );
  }
  // Across scenarios: the ramping one's startTime of 2 s on both, within a few ms (the two
  // runs' own first-request costs differ by that much on this machine).
  const apart = Math.abs(shifts.constant! - shifts.ramping!);
  assert.ok(apart <= 5, `the scenarios start ${apart.toFixed(2)} ms further apart on one engine`);
});

test('a small queueing study names the same first limit on both engines, plateaus within 10 %', {
  skip,
}, async () => {
  const out = await mkdtemp(join(dir, 'study-'));
  const args = SMALL_STUDY;
  const results: AnalysisResult[] = [];
  for (const engine of [[], ['--engine', 'k6', '--k6-bin', k6!.bin]]) {
    const r = await plateau([
      'run',
      ...args,
      '--recovery',
      '4',
      '--recovery-rate',
      '20',
      ...engine,
      '--json',
      '--out',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    results.push(JSON.parse(r.stdout) as AnalysisResult);
  }
  const [a, b] = results as [AnalysisResult & { runDir: string }, AnalysisResult & { runDir: string }];
  // k6 reports nothing of its own health: the harness read its CPU from /proc.
  const generator = JSON.parse(
    await readFile(join(b.runDir, 'generator.json'), 'utf8'),
  ) as GeneratorCpuReport;
  assert.equal(generator.engine, 'k6');
  assert.ok(generator.seconds.length >= 5, `${generator.seconds.length} seconds sampled`);
  assert.ok(
    b.table.some((r) => r.generator.cpuPctMax !== null && r.generator.cpuPctMax > 0),
    'the table carries k6 CPU',
  );
  assert.equal(a.verdict.firstLimit.resource, 'pool');
  assert.equal(b.verdict.firstLimit.resource, a.verdict.firstLimit.resource);
  const pa = a.verdict.plateau!.servedPerSec;
  const pb = b.verdict.plateau!.servedPerSec;
  assert.ok(Math.abs(pa - pb) / pa <= 0.1, `plateaus ${pa} and ${pb}/s`);
});
