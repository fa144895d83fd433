import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { autogroupNice, setAutogroupNice } from './autogroup.ts';

const here = autogroupNice();

test('a new session gets its own autogroup, whose nice value can be set and read back', {
  skip: here === undefined ? 'this kernel has no sched_autogroup (/proc/self/autogroup)' : false,
}, async () => {
  const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  try {
    assert.equal(autogroupNice(child.pid!), 0, 'a new session starts at nice 0');
    assert.ok(setAutogroupNice(child.pid!, 7));
    assert.equal(autogroupNice(child.pid!), 7);
    assert.equal(autogroupNice(), here, "this process's own group is untouched");
  } finally {
    child.kill();
    await once(child, 'exit');
  }
  assert.equal(setAutogroupNice(child.pid!, 7), false, 'a process that is gone');
  assert.equal(autogroupNice(child.pid!), undefined);
});
