// `plateau init` writes a starter study that `plateau run` then runs from its directory,
// reading plateau.config.json; flags override the file, and run.json says which came from it.
// test-run: load
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { AnalysisResult, RunManifest } from '../contract/index.ts';
import { plateau } from './helpers/cli.ts';
import { startTestServer } from './helpers/test-server.ts';

const plateauIn = (cwd: string, args: string[]) => plateau(args, { cwd });

test('plateau init writes a script and config that plateau run runs as they are', async () => {
  const server = await startTestServer();
  const dir = await mkdtemp(join(tmpdir(), 'plateau-init-'));
  const init = await plateau(['init', dir, '--target', server.url, '--endpoint', '/api/orders']);
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /edit the request in .*k6\/study\.ts/);
  const config = JSON.parse(await readFile(join(dir, 'plateau.config.json'), 'utf8'));
  assert.equal(config.target, server.url);
  assert.match(await readFile(join(dir, 'k6', 'study.ts'), 'utf8'), /tagged\(\)/);
  const again = await plateau(['init', dir]);
  assert.equal(again.code, 104, 'no silent overwrite');
  assert.match(again.stderr, /exist \(pass --force/);

  // A short study: the file's steps, overridden by flags for the holds.
  config.steps = [5, 10];
  await writeFile(join(dir, 'plateau.config.json'), JSON.stringify(config));
  const run = await plateauIn(dir, ['run', '--hold', '2', '--ramp', '1', '--recovery', '2', '--json']);
  assert.equal(run.code, 0, run.stderr);
  const analysis = JSON.parse(run.stdout) as AnalysisResult & { runDir: string };
  assert.deepEqual(
    analysis.table.map((row) => row.step).filter((step) => step.startsWith('r')),
    ['r005', 'r010'],
  );
  assert.ok(server.requests.some((r) => r.url === '/api/orders' && r.headers['x-load-step'] === 'r005'));
  const manifest = JSON.parse(await readFile(join(analysis.runDir, 'run.json'), 'utf8')) as RunManifest;
  assert.equal(manifest.config['--steps']?.source, 'config');
  assert.equal(manifest.config['--hold']?.source, 'flag', 'the flag overrides the file');
  assert.equal(manifest.config['--config']?.value, join(dir, 'plateau.config.json'));
});

test('config files in YAML and TypeScript; an unknown key names the setting and the known ones', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-config-'));
  await writeFile(join(dir, 'study.yaml'), 'stpes: [5, 10]\n');
  const bad = await plateau(['run', '--config', join(dir, 'study.yaml'), '--out', dir]);
  assert.equal(bad.code, 104);
  assert.match(bad.stderr, /study\.yaml: stpes: is not a setting of plateau run/);
  assert.match(bad.stderr, /steps/);
  await writeFile(
    join(dir, 'plateau.config.ts'),
    'const hold: number = 1;\nexport default { hold, ramp: 2, run: { steps: [5] } };\n',
  );
  const ts = await plateauIn(dir, ['run', '--out', dir]);
  assert.equal(ts.code, 104, 'the TypeScript config was read: its hold is shorter than its ramp');
  assert.match(ts.stderr, /--hold: 1 s is not longer than --ramp, 2 s/);
});
