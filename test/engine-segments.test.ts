// Two engine instances on two execution segments together run exactly the unsplit test.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { analyzePath } from '../analysis/analyze-run.ts';
import { formatOffsetMs, printSchedule } from '../engine/schedule-report.ts';
import { runScript, writeScript } from './helpers/engine.ts';
import { startTestServer } from './helpers/test-server.ts';

// VUs enough that no start can find them all busy (20 per instance for at most 20 starts a
// second): with 2 and up to 5 per instance, a stall of the loaded CI machine left none free and
// the engine rightly dropped iteration 4, which this test would read as a wrong split.
const scriptFor = (url: string) => `
import http from 'k6/http';
import exec from 'k6/execution';
export const options = { scenarios: { ramp: { executor: 'ramping-arrival-rate', startRate: 20, preAllocatedVUs: 40, maxVUs: 40,
  stages: [{ duration: '1s', target: 40 }] } } };
export default async function () {
  await http.asyncRequest('GET', '${url}/?it=' + exec.scenario.iterationInTest + '&vu=' + exec.vu.idInTest);
}`;

test('segments 0:1/2 and 1/2:1 run disjoint halves whose union is the whole schedule', async () => {
  const server = await startTestServer();
  const script = await writeScript(scriptFor(server.url));
  const schedule = async (segment?: string) => {
    let text = '';
    await printSchedule({
      script,
      env: {},
      ...(segment ? { executionSegment: segment, executionSegmentSequence: '0,1/2,1' } : {}),
      write: (t) => {
        text += t;
      },
    });
    return text.split('\n').filter((l) => /^\d/.test(l));
  };
  const whole = await schedule();
  const halves = [await schedule('0:1/2'), await schedule('1/2:1')];
  assert.equal(whole.length, 29, '1 s ramping 20→40/s: 30, the last at the end excluded');
  assert.deepEqual([...halves[0]!, ...halves[1]!].sort(), [...whole].sort(), 'the same start times, split');
  assert.equal(formatOffsetMs(1_000_000_007), '1000.000007');

  const seen: number[] = [];
  const vus = new Set<string>();
  const csvFiles: string[] = [];
  for (const segment of ['0:1/2', '1/2:1']) {
    const before = server.requests.length;
    const run = await runScript(await writeScript(scriptFor(server.url)), {
      overrides: { executionSegment: segment, executionSegmentSequence: '0,1/2,1' },
    });
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    csvFiles.push(join(run.dir, 'out.csv.gz'));
    for (const r of server.requests.slice(before)) {
      const params = new URL(r.url, 'http://x').searchParams;
      seen.push(Number(params.get('it')));
      vus.add(params.get('vu')!);
    }
  }
  assert.deepEqual(
    seen.sort((a, b) => a - b),
    Array.from({ length: 29 }, (_, i) => i),
    'iterationInTest: every global index exactly once',
  );
  assert.ok(vus.size >= 2, 'VU ids in the test differ between instances');

  // `plateau analyze a.csv.gz b.csv.gz`: the instances' outputs analysed as one test.
  const requestsIn = (output: Awaited<ReturnType<typeof analyzePath>>) =>
    output.analysis.table.reduce((sum, row) => sum + row.requests, 0);
  const together = await analyzePath(csvFiles);
  const apart = await Promise.all(csvFiles.map((file) => analyzePath(file)));
  assert.equal(requestsIn(together), 29, 'every request of the unsplit test');
  assert.equal(requestsIn(together), requestsIn(apart[0]!) + requestsIn(apart[1]!));
  assert.ok(requestsIn(apart[0]!) > 0 && requestsIn(apart[1]!) > 0);
  assert.equal(together.analysis.sources.client, 'out.csv.gz, out.csv.gz');
  await assert.rejects(analyzePath([csvFiles[0]!, dirname(csvFiles[1]!)]), /is a directory/);
});
