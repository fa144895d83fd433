// docker-compose.yml cannot run here (no Docker engine): check its structure instead.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { CLIENT_FILES } from '../analysis/client-files.ts';
import { SERVICE_ENV_KEYS } from '../target-service/config.ts';

const text = readFileSync(fileURLToPath(new URL('../docker-compose.yml', import.meta.url)), 'utf8');
const compose = parse(text) as {
  services: Record<string, Record<string, unknown>>;
  volumes?: Record<string, unknown>;
};

const pg = compose.services.postgres!;
const service = compose.services.service!;
const k6 = compose.services.k6!;
const pgEnv = pg.environment as Record<string, string>;

/** A service's environment as a map, from compose's list form (`NAME=value`, or `NAME` to pass through). */
function environment(of: Record<string, unknown>): Map<string, string | undefined> {
  const env = of.environment as string[] | Record<string, string>;
  if (!Array.isArray(env)) return new Map(Object.entries(env));
  return new Map(
    env.map((entry) => {
      const eq = entry.indexOf('=');
      return eq < 0 ? [entry, undefined] : [entry.slice(0, eq), entry.slice(eq + 1)];
    }),
  );
}

const serviceEnv = environment(service);
const k6Env = environment(k6);
const k6Script = (k6.command as string[]).join('\n');

test('the postgres service: PostgreSQL 18, loopback port, a health check, the documented credentials', () => {
  assert.match(String(pg.image), /^postgres:18/);
  assert.deepEqual(pg.ports, ['127.0.0.1:5432:5432']);
  const url = `postgres://${pgEnv.POSTGRES_USER}:${pgEnv.POSTGRES_PASSWORD}@127.0.0.1:5432/${pgEnv.POSTGRES_DB}`;
  assert.ok(
    text.includes(`DATABASE_URL=${url}`),
    'the usage comment gives the URL that matches the credentials',
  );
  assert.ok((pg.healthcheck as { test: string[] }).test.join(' ').includes('pg_isready'));
});

test('a plain docker compose up starts PostgreSQL and the reference service, and k6 is opt-in', () => {
  const started = Object.entries(compose.services)
    .filter(([, s]) => s.profiles === undefined)
    .map(([name]) => name)
    .sort();
  assert.deepEqual(started, ['postgres', 'service']);
  assert.deepEqual(k6.profiles, ['k6']);
});

test('the service runs plateau serve from this checkout on node 20', () => {
  assert.match(String(service.image), /^node:20\b/);
  const mounts = service.volumes as string[];
  assert.ok(mounts.includes(`.:${service.working_dir}`), 'the checkout is its working directory');
  const command = (service.command as string[]).join(' ');
  assert.match(command, /npm ci\b.*&& exec node bin\/plateau\.js serve$/);
});

test("the service's node_modules is a named volume, not the host's", () => {
  const volume = (service.volumes as string[]).find((v) => v.endsWith(`${service.working_dir}/node_modules`));
  assert.ok(volume, 'node_modules has a mount of its own');
  const name = volume.split(':')[0]!;
  assert.ok(compose.volumes && name in compose.volumes, `${name} is declared as a named volume`);
});

test('the service reaches PostgreSQL by its compose hostname with its credentials, once it is healthy', () => {
  assert.equal(
    serviceEnv.get('DATABASE_URL'),
    `postgres://${pgEnv.POSTGRES_USER}:${pgEnv.POSTGRES_PASSWORD}@postgres:5432/${pgEnv.POSTGRES_DB}`,
  );
  assert.deepEqual(service.depends_on, { postgres: { condition: 'service_healthy' } });
});

test('the service listens on every interface in its container, published on the loopback only', () => {
  assert.equal(serviceEnv.get('HOST'), '0.0.0.0', "127.0.0.1 (the default) is the container's own loopback");
  const port = serviceEnv.get('PORT');
  assert.deepEqual(service.ports, [`127.0.0.1:${port}:${port}`]);
});

test('its health check asks GET /healthz on its port', () => {
  const check = (service.healthcheck as { test: string[] }).test.join(' ');
  assert.ok(check.includes(`http://127.0.0.1:${serviceEnv.get('PORT')}/healthz`), check);
});

test('the settings passed through from the shell are service settings, without defaults of their own', () => {
  const passed = [...serviceEnv].filter(([, value]) => value === undefined).map(([name]) => name);
  assert.ok(passed.includes('POOL_MAX'));
  for (const name of passed) assert.ok((SERVICE_ENV_KEYS as readonly string[]).includes(name), name);
});

test('the k6 profile runs the capacity bundle against the service once it is healthy', () => {
  assert.match(String(k6.image), /^grafana\/k6/);
  assert.ok((k6.volumes as string[]).includes('./dist/k6:/scripts:ro'), 'the bundles plateau builds');
  assert.deepEqual(k6.depends_on, { service: { condition: 'service_healthy' } });
  assert.equal(k6Env.get('BASE_URL'), `http://service:${serviceEnv.get('PORT')}`);
  assert.equal(k6.network_mode, undefined, "the compose network, where the service's name resolves");
  assert.match(k6Script, /k6 run .*\/scripts\/capacity\.js/);
});

test('the k6 profile writes a run directory under ./runs, its files named as plateau names them', () => {
  assert.ok(
    (k6.volumes as string[]).includes('./runs:/runs'),
    'a bind mount: plateau analyze reads it on the host',
  );
  assert.equal(CLIENT_FILES[0], 'k6.csv.gz');
  assert.ok(
    k6Script.includes('csv=fileName=$$dir/k6.csv.gz,timeFormat=unix_milli'),
    'k6.csv.gz, millisecond stamps',
  );
  assert.ok(k6Script.includes('--summary-export "$$dir/summary.json"'));
  assert.ok(k6Script.includes('/steps/reset'), "the service's figures start with the load");
  assert.ok(k6Script.includes('-O "$$dir/server.json" "$$BASE_URL/steps"'), 'server.json from GET /steps');
  assert.match(String(k6.user), /PLATEAU_UID/, 'runs as the user who analyses the directory afterwards');
});

test('the usage comment says how to start it, run the k6 profile and analyse the result', () => {
  assert.ok(text.includes('docker compose up -d\n'));
  assert.ok(text.includes('docker compose --profile k6 run --rm k6'));
  assert.ok(text.includes('npx plateau analyze runs/<id>'));
});
