import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Command } from 'commander';
import { isPlateauError } from '../contract/index.ts';
import { applyConfig, readConfigFile } from './config-file.ts';

test("a config's service: block reaches plateau run's flags as written, its cwd relative to the file", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-config-service-'));
  await mkdir(join(dir, 'svc'));
  const path = join(dir, 'plateau.config.yaml');
  await writeFile(
    path,
    [
      'target: http://127.0.0.1:8080',
      'steps: [20, 40]',
      'service:',
      '  command: java -cp build OrdersService',
      '  cwd: svc',
      '  env: { POOL_MAX: 4 }',
      '  ready: { url: "http://127.0.0.1:8080/healthz" }',
      '',
    ].join('\n'),
  );
  const config = await readConfigFile(path, 'run');
  assert.deepEqual(config.service, {
    command: 'java -cp build OrdersService',
    cwd: join(dir, 'svc'),
    env: { POOL_MAX: 4 },
    ready: { url: 'http://127.0.0.1:8080/healthz' },
  });
  const run = new Command('run').option('--target <url>').option('--steps <rates>');
  run.parse([], { from: 'user' });
  const { flags, fromConfig } = applyConfig(run.opts(), run, config, path);
  assert.deepEqual((flags as { serviceProcess?: unknown }).serviceProcess, config.service);
  assert.equal((flags as { steps?: string }).steps, '20,40');
  assert.ok(fromConfig.has('service'));

  // Without a cwd, the service runs in the config file's directory.
  await writeFile(path, 'service: { command: "node s.js", ready: { log: "up" } }\n');
  assert.equal(((await readConfigFile(path, 'run')).service as { cwd: string }).cwd, dir);

  // plateau check starts no service: the block is refused there with the way out.
  const check = new Command('check').option('--target <url>');
  check.parse([], { from: 'user' });
  try {
    applyConfig(check.opts(), check, config, path);
    assert.fail('applied');
  } catch (error) {
    assert.ok(isPlateauError(error));
    assert.deepEqual(
      error.problems.map((p) => p.setting),
      [`${path}: steps`, `${path}: service`],
    );
    assert.match(error.problems[1]!.hint, /under run:/);
  }
});
