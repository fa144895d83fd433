// The engine's warm-up rehearsal (engine/warm-up.ts) only helps if the objects the test
// makes before it (the script's init makes the test's metrics) look to V8 like the ones the
// rehearsal made later: otherwise the first sample of the test throws away the code the
// rehearsal had optimized. V8 can say whether two objects share a hidden class ("map"),
// behind a flag, so this runs in a child process with it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

test('metrics made before others took fractions share hidden classes with metrics made after', () => {
  const program = `
    import { MetricRegistry } from ${JSON.stringify(`${root}engine/metrics/registry.ts`)};
    import { emptyObjectArray } from ${JSON.stringify(`${root}lib/object-array.ts`)};
    const same = new Function('a', 'b', 'return %HaveSameMap(a, b)');
    const early = new MetricRegistry();
    const used = new MetricRegistry();
    used.applyThresholds({ 'http_req_duration{scenario:a}': ['p(95)<1'] });
    for (const name of ['http_req_duration', 'http_reqs', 'vus', 'checks', 'data_sent', 'iteration_duration']) {
      used.builtin(name).ingest(1.25, { scenario: 'a' });
    }
    const late = new MetricRegistry();
    const result = {};
    for (const name of ['http_req_duration', 'http_reqs', 'vus', 'checks', 'data_sent', 'iteration_duration']) {
      const a = early.builtin(name);
      const b = late.builtin(name);
      result[name] = { sink: same(a.sink, b.sink), submetrics: same(a.submetrics, b.submetrics) };
    }
    const filled = emptyObjectArray();
    filled.push({});
    result.emptyObjectArray = same(emptyObjectArray(), filled);
    process.stdout.write(JSON.stringify(result));
  `;
  const out = execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', program],
    { cwd: root, encoding: 'utf8' },
  );
  const result = JSON.parse(out) as Record<string, unknown>;
  for (const [name, verdict] of Object.entries(result)) {
    if (name === 'emptyObjectArray') assert.equal(verdict, true, 'an empty object array and a filled one');
    else assert.deepEqual(verdict, { sink: true, submetrics: true }, name);
  }
});
