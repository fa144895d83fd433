import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { childPids, processCpuUs } from './proc-stat.ts';

test('childPids lists a process’s live children, and only them', async () => {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  try {
    await once(child, 'spawn');
    assert.ok(childPids(process.pid).includes(child.pid!));
    assert.deepEqual(childPids(child.pid!), [], 'it has none of its own');
    assert.ok((processCpuUs(child.pid!) ?? -1) >= 0);
  } finally {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  assert.ok(!childPids(process.pid).includes(child.pid!), 'gone once it has ended');
});
