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

test('--find: a probe places the steps, by default for your own service given no steps; the reference study keeps its own', () => {
  // npm start reproduces the published study: its seed steps, no probe.
  assert.equal(planStudy({}, {}).find, null);
  const found = planStudy({ find: true }, {});
  assert.deepEqual(
    { place: found.find?.placeSteps, repeat: found.find?.repeat, budget: found.find?.budgetSeconds },
    { place: true, repeat: true, budget: 300 },
  );
  assert.equal(found.sources['--find']?.source, 'flag');
  assert.equal(found.sources['--budget']?.value, '300s');
  // Your own service (a target, a script, an endpoint, or a config file) without steps: a probe.
  for (const [says, flags, context] of [
    ['target', { target: 'http://127.0.0.1:8080' }, {}],
    ['endpoint', { endpoint: '/orders' }, {}],
    ['config', {}, { configFile: '/srv/plateau.config.json' }],
  ] as const) {
    const plan = planStudy(flags, {}, context);
    assert.equal(plan.find?.placeSteps, true, says);
    assert.equal(plan.sources['--find']?.source, 'default', says);
  }
  // With steps, or --quick, the steps are given.
  assert.equal(planStudy({ target: 'http://127.0.0.1:8080', steps: '5,10' }, {}).find, null);
  assert.equal(planStudy({ target: 'http://127.0.0.1:8080', quick: true }, {}).find, null);
  assert.equal(
    planStudy({ target: 'http://127.0.0.1:8080', find: false }, {}).find,
    null,
    'find: false in a config',
  );
  // --budget, --no-repeat-decisive, and a given hold kept for the placement.
  const short = planStudy({ find: true, budget: '1m30s', repeatDecisive: false, hold: '5' }, {});
  assert.deepEqual(
    { budget: short.find?.budgetSeconds, repeat: short.find?.repeat, hold: short.find?.given.holdSeconds },
    { budget: 90, repeat: false, hold: 5 },
  );
  // Given steps with their decisive ones repeated: the probe only chooses which.
  const repeated = planStudy({ steps: '20,40,60', repeatDecisive: true }, {});
  assert.deepEqual(
    { place: repeated.find?.placeSteps, repeat: repeated.find?.repeat },
    { place: false, repeat: true },
  );
  // Steps with repeats written out are steps like any (what confirm passes back).
  assert.deepEqual(planStudy({ steps: '20,40,60,20,40' }, {}).steps, [20, 40, 60, 20, 40]);
});

test('--find refuses --steps, --quick and the closed model; --budget is a duration of at least 1m that holds the study', () => {
  const refused = (flags: Parameters<typeof planStudy>[0]): string[] => {
    try {
      planStudy(flags, {});
    } catch (error) {
      assert.ok(isPlateauError(error));
      assert.equal(error.exitCode, 104);
      return error.problems.map((p) => `${p.setting}: ${p.message}`);
    }
    return [];
  };
  assert.deepEqual(refused({ find: true, steps: '20,40' }), ['--find: cannot be given with --steps']);
  assert.deepEqual(refused({ find: true, quick: true }), ['--find: cannot be given with --quick']);
  assert.ok(refused({ find: true, model: 'closed' }).includes('--find: cannot be given with --model'));
  assert.deepEqual(refused({ find: true, budget: 'soon' }), ['--budget: "soon" is not accepted']);
  assert.deepEqual(refused({ find: true, budget: '20s' }), [
    '--budget: 20s is too short for even the probe and the smallest study',
  ]);
  assert.deepEqual(refused({ budget: '5m' }), [
    '--budget: bounds a study that probes first, and this one does not',
  ]);
  assert.match(
    refused({ find: true, budget: '2m', hold: '20' })[0] ?? '',
    /^--budget: 120s does not hold a probe and 9 steps of --hold 20 s/,
  );
  assert.deepEqual(refused({ steps: '40,20' }), [
    '--steps: "40,20" is not accepted: 20 is below 40 before it and was not run before (a lower rate can only repeat an earlier step)',
  ]);
});

test('--workers runs the embedded engine on processes; auto leaves a core to each part of the study on this machine', () => {
  const workers = (flags: Parameters<typeof planStudy>[0]) => planStudy(flags, {}, { cores: 8 }).workers;
  const cases: [string, Parameters<typeof planStudy>[0], number | undefined][] = [
    // The reference study: its service and its embedded PostgreSQL here.
    ['reference study', { workers: 'auto' }, 6],
    // It on a PostgreSQL given by URL (maybe elsewhere): only the service's core.
    ['database by URL', { workers: 'auto', db: 'postgres://u@db/x' }, 7],
    // Your own service on this machine, started by you.
    ['local target', { workers: 'auto', target: 'http://127.0.0.1:8080' }, 7],
    // A service elsewhere: every core.
    ['remote target', { workers: 'auto', target: 'http://10.0.0.5:80', allowRemoteTarget: true }, 8],
    ['a count', { workers: '3' }, 3],
    ['none: one process', {}, undefined],
  ];
  for (const [name, flags, expected] of cases) assert.equal(workers(flags), expected, name);
  assert.deepEqual(planStudy({ workers: '3' }, {}, { cores: 8 }).sources['--workers'], {
    value: 3,
    source: 'flag',
  });
  const refused = (flags: Parameters<typeof planStudy>[0]) => {
    try {
      planStudy(flags, {}, { cores: 8 });
    } catch (error) {
      assert.ok(isPlateauError(error));
      return error.problems.map((p) => `${p.setting}: ${p.message}`);
    }
    return [];
  };
  assert.deepEqual(refused({ workers: '9' }), [
    '--workers: 9 workers are more than the 8 cores this process may use',
  ]);
  assert.deepEqual(refused({ workers: '2', engine: 'k6' }), [
    "--workers: splits the embedded engine's load over processes; real k6 uses every core by itself",
  ]);
});
