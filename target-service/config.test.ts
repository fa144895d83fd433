import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPlateauError } from '../contract/index.ts';
import {
  loadServiceConfig,
  parseServiceConfig,
  SERVICE_DEFAULTS,
  SERVICE_ENV_KEYS,
  serviceSettingsHelp,
} from './config.ts';

test('no environment gives the documented defaults', () => {
  const { config, problems } = parseServiceConfig({});
  assert.deepEqual(problems, []);
  assert.deepEqual(config, SERVICE_DEFAULTS);
  assert.equal(config.poolMax, 4);
  assert.equal(config.queryMs, 50);
  assert.equal(config.payloadKb, 88);
  assert.equal(config.queueMax, 8);
  assert.equal(config.acquireTimeoutMs, 200);
  assert.equal(config.shed, true);
});

test('environment values are read and typed', () => {
  const { config } = parseServiceConfig({
    POOL_MAX: '8',
    QUERY_MS: '20',
    SHED: 'off',
    RENDER_FIRST: 'on',
    DATABASE_URL: 'postgres://u:p@db:5432/x',
  });
  assert.equal(config.poolMax, 8);
  assert.equal(config.queryMs, 20);
  assert.equal(config.shed, false);
  assert.equal(config.renderFirst, true);
  assert.equal(config.databaseUrl, 'postgres://u:p@db:5432/x');
});

test('programmatic overrides win over the environment', () => {
  const { config } = parseServiceConfig({ POOL_MAX: '8' }, { poolMax: 2, port: 0 });
  assert.equal(config.poolMax, 2);
  assert.equal(config.port, 0);
});

test('every bad value is reported at once, naming the variable and the accepted range', () => {
  const { problems } = parseServiceConfig({
    POOL_MAX: '0',
    QUERY_MS: 'fast',
    PORT: '70000',
    SHED: 'maybe',
    QUEUE_MAX: '2.5',
    DATABASE_URL: 'mysql://x',
  });
  assert.deepEqual(
    problems.map((p) => p.setting),
    ['PORT', 'POOL_MAX', 'QUERY_MS', 'QUEUE_MAX', 'SHED', 'DATABASE_URL'],
  );
  assert.match(problems.find((p) => p.setting === 'POOL_MAX')!.hint, /1 to 1000/);
  assert.match(problems.find((p) => p.setting === 'SHED')!.hint, /on or off/);
});

test('loadServiceConfig throws one error listing every problem', () => {
  assert.throws(
    () => loadServiceConfig({ POOL_MAX: '-1', ACQUIRE_TIMEOUT_MS: 'x' }),
    (error: unknown) =>
      isPlateauError(error) &&
      error.code === 'PLATEAU_INVALID_CONFIG' &&
      error.problems.length === 2 &&
      /POOL_MAX/.test(error.message) &&
      /ACQUIRE_TIMEOUT_MS/.test(error.message),
  );
});

test('the help lists every setting the service reads, with its default and what is accepted', () => {
  const help = serviceSettingsHelp();
  for (const key of SERVICE_ENV_KEYS) assert.match(help, new RegExp(`^  ${key} `, 'm'), key);
  assert.match(help, /^ {2}POOL_MAX +4 +1-1000 /m);
  assert.match(help, /^ {2}SHED +on +on\|off /m);
  // A value the help says is accepted is accepted; one past it is not.
  assert.deepEqual(parseServiceConfig({ POOL_MAX: '1000' }).problems, []);
  assert.equal(parseServiceConfig({ POOL_MAX: '1001' }).problems.length, 1);
});

test('the admission gate and the second limit are off by default and read from the environment', () => {
  assert.equal(SERVICE_DEFAULTS.admission, false);
  assert.equal(SERVICE_DEFAULTS.cpuMs, 0);
  const { config, problems } = parseServiceConfig({
    ADMISSION: 'on',
    ADMISSION_HIGH_MS: '60',
    ADMISSION_LOW_MS: '15',
    ADMISSION_SAMPLE_MS: '100',
    CPU_MS: '12',
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(
    [config.admission, config.admissionHighMs, config.admissionLowMs, config.admissionSampleMs, config.cpuMs],
    [true, 60, 15, 100, 12],
  );
});

test('watermarks without hysteresis are refused with the way out', () => {
  const { problems } = parseServiceConfig({ ADMISSION_HIGH_MS: '20', ADMISSION_LOW_MS: '20' });
  assert.equal(problems.length, 1);
  assert.equal(problems[0]!.setting, 'ADMISSION_LOW_MS');
  assert.match(problems[0]!.hint, /under the high one/);
});
