// docker-compose.yml cannot run here (no Docker engine): check its structure instead.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const text = readFileSync(fileURLToPath(new URL('../docker-compose.yml', import.meta.url)), 'utf8');
const compose = parse(text) as { services: Record<string, Record<string, unknown>> };

test('the postgres service: PostgreSQL 18, loopback port, a health check, the documented credentials', () => {
  const pg = compose.services.postgres!;
  assert.match(String(pg.image), /^postgres:18/);
  assert.deepEqual(pg.ports, ['127.0.0.1:5432:5432']);
  const env = pg.environment as Record<string, string>;
  const url = `postgres://${env.POSTGRES_USER}:${env.POSTGRES_PASSWORD}@127.0.0.1:5432/${env.POSTGRES_DB}`;
  assert.ok(
    text.includes(`DATABASE_URL=${url}`),
    'the usage comment gives the URL that matches the credentials',
  );
  assert.ok((pg.healthcheck as { test: string[] }).test.join(' ').includes('pg_isready'));
});

test('the k6 service is opt-in and runs the bundles plateau builds', () => {
  const k6 = compose.services.k6!;
  assert.match(String(k6.image), /^grafana\/k6/);
  assert.deepEqual(k6.profiles, ['k6'], 'not started by a plain docker compose up');
  assert.ok((k6.volumes as string[]).includes('./dist/k6:/scripts:ro'));
  assert.equal(k6.network_mode, 'host', 'reaches the service on the host loopback');
  assert.deepEqual(Object.keys(compose.services).sort(), ['k6', 'postgres']);
});
