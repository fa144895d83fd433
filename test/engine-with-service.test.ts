// The shipped capacity bundle, run by the embedded engine against the reference service.
// test-run: load
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { ServerStepReport } from '../contract/index.ts';
import { buildK6Scripts } from '../harness/build-scripts.ts';
import { runScript } from './helpers/engine.ts';
import { fetchText } from './helpers/http.ts';
import { useStatementServices } from './helpers/service.ts';

const startService = useStatementServices();
const bundles = await mkdtemp(join(tmpdir(), 'plateau-bundles-'));
after(() => rm(bundles, { recursive: true, force: true }));

test('dist/k6/capacity.js runs unchanged: every request carries its step, client and server agree', async () => {
  const built = await buildK6Scripts({ outDir: bundles });
  const capacity = built.find((b) => b.name === 'capacity')!.outFile;
  const service = await startService({ queryMs: 20, payloadKb: 4 });
  const { cp } = await import('node:fs/promises');
  const dir = await mkdtemp(join(bundles, 'run-'));
  await cp(capacity, join(dir, 'capacity.js'));
  const run = await runScript(join(dir, 'capacity.js'), {
    env: { BASE_URL: service.url, STEPS: '10,20', HOLD: '2', RAMP: '1', RECOVERY: '6', RECOVERY_RATE: '5' },
  });
  assert.equal(run.exitCode, 0, `${run.reason}\n${run.logs.join('\n')}`);
  const reqs = run.rows.filter((r) => r.metric_name === 'http_reqs');
  const byStep = new Map<string, number>();
  for (const row of reqs) {
    const step = /(?:^|&)step=([^&]+)/.exec(row.extra_tags ?? '')?.[1] ?? 'none';
    byStep.set(step, (byStep.get(step) ?? 0) + 1);
    assert.equal(row.name, 'GET /statement', 'the name tag is fixed');
    assert.equal(row.status, '200');
  }
  assert.deepEqual([...byStep.keys()], ['r010', 'r020', 'drain', 'recovery']);
  // r010: ramp 0→10 in 1 s (5) + 1 s at 10 (10); r020: ramp 10→20 (15) + 1 s at 20 (20). A
  // start due exactly on a step boundary is tagged when it is sent, a hair later: the next step.
  assert.ok(Math.abs((byStep.get('r010') ?? 0) - 15) <= 1, `r010 ${byStep.get('r010')}`);
  assert.ok(Math.abs((byStep.get('r020') ?? 0) - 35) <= 1, `r020 ${byStep.get('r020')}`);
  const report = JSON.parse((await fetchText(`${service.url}/steps`)).text) as ServerStepReport;
  const served = new Map(report.steps.map((s) => [s.step, s.served]));
  for (const [step, count] of byStep)
    assert.equal(served.get(step), count, `server counted ${step} the same`);
});
