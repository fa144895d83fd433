import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engineNodeFlags, needsEngineRelaunch } from './node-flags.ts';

test('only `engine run` without the flags relaunches; PLATEAU_ENGINE_GC=parallel opts out', () => {
  const argv = (...args: string[]) => ['node', 'bin/plateau.js', ...args];
  const single = [
    '--single-threaded-gc',
    '--no-memory-reducer',
    '--initial-old-space-size=256',
    '--no-allocation-site-pretenuring',
  ];
  assert.deepEqual(engineNodeFlags({}), single);
  assert.deepEqual(engineNodeFlags({ PLATEAU_ENGINE_GC: 'parallel' }), [], "V8's defaults");
  assert.deepEqual(engineNodeFlags({ PLATEAU_ENGINE_GC: 'single' }), single);
  assert.throws(
    () => engineNodeFlags({ PLATEAU_ENGINE_GC: 'paralel' }),
    /PLATEAU_ENGINE_GC="paralel" is not a GC mode/,
  );
  assert.equal(needsEngineRelaunch(argv('engine', 'run', 's.js'), []), true);
  assert.equal(
    needsEngineRelaunch(argv('engine', 'run', 's.js'), ['--single-threaded-gc']),
    true,
    'every flag',
  );
  assert.equal(needsEngineRelaunch(argv('engine', 'run', 's.js'), single), false);
  assert.equal(needsEngineRelaunch(argv('engine', 'schedule', 's.js'), []), false);
  assert.equal(needsEngineRelaunch(argv('serve'), []), false, 'the service under test keeps Node defaults');
  assert.equal(needsEngineRelaunch(argv('engine', 'run', 's.js'), ['--inspect-brk']), false, 'debugging');
});
