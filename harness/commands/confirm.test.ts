import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPlateauError, type RunManifest } from '../../contract/index.ts';
import { flagsFromManifest } from './confirm.ts';

/** A recorded open-model run against `target`, with what `extra` adds. */
function manifest(extra: Partial<RunManifest>): RunManifest {
  return {
    kind: 'plateau.run',
    schemaVersion: 2,
    id: '20261201-101500-ab12cd',
    status: 'completed',
    startedAt: '2026-12-01T10:15:00.000Z',
    endedAt: '2026-12-01T10:16:00.000Z',
    config: {},
    load: {
      script: 'capacity',
      stepsPerSec: [5, 10],
      holdSeconds: 2,
      rampSeconds: 1,
      recoveryRatePerSec: 5,
      recoverySeconds: 2,
      jitterSeconds: 0,
      p95Ms: 250,
      failRate: 0.01,
    },
    service: null,
    target: 'http://127.0.0.1:8080',
    engine: { name: 'embedded', version: 'plateau-embedded' },
    database: null,
    versions: { node: 'v20', plateau: '0.1.0', gitCommit: null },
    machine: { cpus: 2, memoryMb: 4096, platform: 'linux' },
    reachedStep: null,
    exitCode: 0,
    warnings: [],
    ...extra,
  };
}

const SERVICE = {
  command: ['node', 'server.js'],
  cwd: '/srv/orders',
  env: {
    POOL_MAX: { value: '4', source: 'config' as const },
    PORT: { value: '8080', source: 'config' as const },
  },
  ready: { log: 'ready on \\d+', timeoutSeconds: 60 },
  stop: { signal: 'SIGTERM', graceSeconds: 10 },
};

test('a service plateau started is started again, with --set over its env and its own kind of database', () => {
  const flags = flagsFromManifest(manifest({ serviceProcess: SERVICE }), { set: ['POOL_MAX=8'] }, {});
  assert.deepEqual(flags.serviceProcess, {
    command: ['node', 'server.js'],
    cwd: '/srv/orders',
    env: { POOL_MAX: '4', PORT: '8080' },
    ready: SERVICE.ready,
    stop: SERVICE.stop,
  });
  assert.deepEqual(flags.set, ['POOL_MAX=8']);
  assert.equal(flags.target, 'http://127.0.0.1:8080');
  assert.equal(flags.db, undefined, 'it had no database from plateau, and gets none');

  const info = {
    serverVersion: '18.0',
    maxConnections: 100,
    superuserReservedConnections: 3,
    reservedConnections: 0,
    ordinarySlots: 97,
  };
  const embedded = manifest({ serviceProcess: SERVICE, database: { kind: 'embedded', ...info } });
  assert.equal(flagsFromManifest(embedded, {}, {}).db, 'embedded');
  const byUrl = manifest({ serviceProcess: SERVICE, database: { kind: 'url', ...info } });
  assert.equal(
    flagsFromManifest(byUrl, {}, { DATABASE_URL: 'postgres://u@127.0.0.1/app' }).db,
    'postgres://u@127.0.0.1/app',
  );
  assert.throws(
    () => flagsFromManifest(byUrl, {}, {}),
    (error) => isPlateauError(error) && error.problems[0]?.setting === 'DATABASE_URL',
  );
});

test('--set on a target plateau did not start explains that it cannot, and how to declare the service', () => {
  assert.throws(
    () => flagsFromManifest(manifest({}), { set: ['POOL_MAX=8'] }, {}),
    (error) =>
      isPlateauError(error) &&
      /plateau did not start the service at http:\/\/127\.0\.0\.1:8080, so it cannot change its settings/.test(
        error.message,
      ) &&
      /service: \{ command, env, ready \}/.test(error.problems[0]?.hint ?? ''),
  );
  assert.equal(
    flagsFromManifest(manifest({}), { set: [] }, {}).target,
    'http://127.0.0.1:8080',
    'a plain repeat is fine',
  );
});
