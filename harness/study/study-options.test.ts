import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPlateauError } from '../../contract/index.ts';
import { isLoopbackUrl, planStudy, QUICK_PROFILE, scriptEnv } from './study-options.ts';

function problems(flags: Parameters<typeof planStudy>[0], env: Record<string, string> = {}): string[] {
  try {
    planStudy(flags, env);
  } catch (error) {
    assert.ok(isPlateauError(error));
    assert.equal(error.code, 'PLATEAU_INVALID_CONFIG');
    return error.problems.map((p) => p.setting);
  }
  return [];
}

test('defaults and --quick, each value with its source', () => {
  const plan = planStudy({}, {});
  assert.deepEqual(plan.steps, [20, 40, 60, 70, 80, 90, 110]);
  assert.equal(plan.sources['--hold']?.source, 'default');
  const quick = planStudy({ quick: true }, {});
  assert.deepEqual(quick.steps, QUICK_PROFILE.steps);
  assert.equal(quick.holdSeconds, QUICK_PROFILE.holdSeconds);
  const flagged = planStudy(
    { quick: true, hold: '8', set: ['POOL_MAX=8'] },
    { DATABASE_URL: 'postgres://u:p@127.0.0.1/x' },
  );
  assert.equal(flagged.holdSeconds, 8, 'a flag beats --quick');
  assert.deepEqual(flagged.service, { POOL_MAX: '8' });
  assert.equal(flagged.sources.POOL_MAX?.source, 'flag');
  assert.equal(flagged.db, 'postgres://u:p@127.0.0.1/x');
  assert.equal(flagged.sources['--db']?.source, 'env');
  assert.equal(
    flagged.sources['--db']?.value,
    '<postgres url>',
    'the URL (and its password) is not recorded',
  );
});

test('bad options are all reported at once, before anything starts', () => {
  assert.deepEqual(
    problems({
      steps: '40,20',
      hold: '0',
      set: ['NOPE=1', 'POOL_MAX=0'],
      engine: 'jmeter',
      db: 'mysql://x',
      failRate: '2',
    }).sort(),
    ['--db', '--engine', '--fail-rate', '--hold', '--set', '--set POOL_MAX', '--steps'].sort(),
  );
});

test('load goes only to loopback unless --allow-remote-target', () => {
  for (const url of ['http://127.0.0.1:8080', 'http://127.9.9.9', 'http://localhost:1', 'http://[::1]:80']) {
    assert.equal(isLoopbackUrl(url), true, url);
  }
  for (const url of ['http://10.0.0.5', 'http://192.168.1.2', 'https://example.com', 'http://0.0.0.0']) {
    assert.equal(isLoopbackUrl(url), false, url);
  }
  assert.deepEqual(problems({ target: 'http://10.0.0.5:80' }), ['--target']);
  assert.equal(
    planStudy({ target: 'http://10.0.0.5:80', allowRemoteTarget: true }, {}).target,
    'http://10.0.0.5',
  );
  assert.deepEqual(problems({ target: 'http://127.0.0.1:8080', set: ['POOL_MAX=8'] }), ['--set']);
});

test('the script gets the plan as -e settings, with the VUs the study sized', () => {
  const vus = { preAllocatedVUs: 123, maxVUs: 456, basis: 'test' };
  const env = scriptEnv(
    planStudy({ steps: '100,2000', hold: '10', ramp: '2' }, {}),
    'http://127.0.0.1:9',
    vus,
  );
  assert.equal(env.STEPS, '100,2000');
  assert.equal(env.HOLD, '10');
  assert.equal(env.BASE_URL, 'http://127.0.0.1:9');
  assert.equal(env.PREALLOCATED_VUS, '123');
  assert.equal(env.MAX_VUS, '456');
});

test('a hold no longer than its ramp names where the ramp came from', () => {
  const message = (flags: Parameters<typeof planStudy>[0]) => {
    try {
      planStudy(flags, {});
    } catch (error) {
      if (isPlateauError(error)) return error.problems.find((p) => p.setting === '--hold')?.message ?? '';
      throw error;
    }
    return '';
  };
  assert.match(message({ quick: true, hold: '1' }), /--quick's ramp, 1 s/);
  assert.match(message({ hold: '1', ramp: '2' }), /not longer than --ramp, 2 s/);
  assert.match(message({ hold: '2' }), /the default ramp, 2 s/);
});

test('a service in the config: --set changes its env (any key), and it needs the URL to load', () => {
  const service = { command: 'node server.js', env: { POOL_MAX: '4' }, ready: { log: 'ready' } };
  const plan = planStudy(
    { target: 'http://127.0.0.1:8080', serviceProcess: service, set: ['POOL_MAX=8', 'TRACE=on'] },
    {},
  );
  assert.deepEqual(plan.service, {}, 'no reference-service settings');
  assert.deepEqual(plan.serviceProcess?.env.POOL_MAX, { value: '8', source: 'flag' });
  assert.deepEqual(plan.serviceProcess?.added, ['TRACE'], 'a key its env lacks is added, and listed');
  assert.equal(plan.serviceProcess?.database, false, 'no --db: plateau opens no database for it');
  // The same entry: a `set` from the config file, marked `config` in the sources, is marked in the env too.
  assert.equal(plan.sources.POOL_MAX, plan.serviceProcess?.env.POOL_MAX);
  assert.equal(
    planStudy({ target: 'http://127.0.0.1:8080', serviceProcess: service, db: 'embedded' }, {}).serviceProcess
      ?.database,
    true,
  );
  assert.deepEqual(problems({ serviceProcess: service }), ['service']);
  assert.deepEqual(problems({ target: 'http://127.0.0.1:8080', serviceProcess: { env: [] } }).sort(), [
    'service.command',
    'service.env',
    'service.ready',
  ]);
});

test('--set on a target plateau did not start says it cannot change that service, and how to declare it', () => {
  try {
    planStudy({ target: 'http://127.0.0.1:8080', set: ['POOL_MAX=8'] }, {});
    assert.fail('planned');
  } catch (error) {
    assert.ok(isPlateauError(error));
    const problem = error.problems.find((p) => p.setting === '--set');
    assert.match(problem?.message ?? '', /plateau did not start the service at http:\/\/127\.0\.0\.1:8080/);
    assert.match(problem?.hint ?? '', /service: \{ command, env, ready \}/);
  }
});
