import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plateau } from '../../test/helpers/cli.ts';
import { runScript, writeScript } from '../../test/helpers/engine.ts';

// k6 modules a script may import that the embedded engine does not offer: each is refused at
// load, before any VU starts, with exit 107 and the way out.
const UNOFFERED = [
  'k6/ws', // k6's WebSocket client
  'k6/net/grpc', // gRPC
  'k6/browser', // the browser module (k6 v0.52+)
  'k6/experimental/browser', // the browser module before v0.52
  'k6/experimental/websockets',
  'k6/experimental/redis',
  'k6/experimental/timers', // k6 v0.49's timers: the engine has k6/timers
  'k6/no-such-module', // not a k6 module at all: refused the same way
];

for (const module of UNOFFERED) {
  test(`a script importing ${module} is refused at load with exit 107, naming it and --engine k6`, async () => {
    const script = await writeScript(`
import * as m from '${module}';
export const options = { iterations: 1 };
export default function () { m.default; }`);
    const run = await runScript(script);
    assert.equal(run.exitCode, 107, run.logs.join('\n'));
    assert.ok(run.reason.includes(`"${module}"`), run.reason);
    assert.match(run.reason, /plateau run --engine k6/);
    assert.match(run.reason, /k6 run/);
    assert.equal(run.rows.filter((r) => r.metric_name === 'iterations').length, 0, 'no iteration ran');
  });
}

test('plateau engine run says which module is refused on stderr and exits 107', async () => {
  const script = await writeScript(`
import { WebSocket } from 'k6/experimental/websockets';
import ws from 'k6/ws';
export default function () { ws.connect; WebSocket; }`);
  const result = await plateau(['engine', 'run', script, '-q']);
  assert.equal(result.code, 107, result.stderr);
  assert.match(result.stderr, /k6\/experimental\/websockets|k6\/ws/);
  assert.match(result.stderr, /--engine k6/);
});
