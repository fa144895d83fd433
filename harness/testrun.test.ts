// The k6-operator TestRun manifest: a ConfigMap with the exact bundle, a TestRun that runs it
// on N runners with the script's variables, and a CSV per runner on the results claim.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { isPlateauError } from '../contract/index.ts';
import { plateau } from '../test/helpers/cli.ts';
import { PROJECT_ROOT } from './build-scripts.ts';
import { testRunManifest } from './testrun.ts';

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
  spec?: {
    parallelism: number;
    script: { configMap: { name: string; file: string } };
    arguments: string;
    runner: {
      image: string;
      env: { name: string; value?: string; valueFrom?: { fieldRef: { fieldPath: string } } }[];
      volumeMounts: { name: string; mountPath: string }[];
      volumes: { name: string; persistentVolumeClaim: { claimName: string } }[];
    };
  };
}

test('the manifest carries the exact bundle and runs it on N runners, a CSV per runner', async () => {
  const text = await testRunManifest({
    script: 'capacity',
    parallelism: 3,
    name: 'cap-test',
    namespace: 'load',
    env: { BASE_URL: 'http://statement-api:3000', STEPS: '100,200' },
    image: 'grafana/k6:1.2.0',
    resultsClaim: 'results',
  });
  const docs = parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((d) => d !== null);
  const configMap = docs.find((d) => d.kind === 'ConfigMap');
  const testRun = docs.find((d) => d.kind === 'TestRun');
  assert.ok(configMap && testRun, 'a ConfigMap and a TestRun');
  const bundle = await readFile(join(PROJECT_ROOT, 'dist', 'k6', 'capacity.js'), 'utf8');
  assert.equal(configMap.data?.['capacity.js'], bundle, 'the script byte for byte');
  assert.deepEqual(configMap.metadata, { name: 'cap-test', namespace: 'load' });
  const spec = testRun.spec!;
  assert.equal(spec.parallelism, 3);
  assert.deepEqual(spec.script.configMap, { name: 'cap-test', file: 'capacity.js' });
  assert.equal(
    spec.arguments,
    '-e BASE_URL=http://statement-api:3000 -e STEPS=100,200 --tag testid=cap-test --out csv',
  );
  assert.equal(spec.runner.image, 'grafana/k6:1.2.0');
  const env = spec.runner.env;
  assert.equal(env[0]?.name, 'POD_NAME', 'defined before the variable that uses it');
  assert.equal(env[0]?.valueFrom?.fieldRef.fieldPath, 'metadata.name');
  assert.deepEqual(env[1], { name: 'K6_CSV_FILENAME', value: '/results/$(POD_NAME).csv.gz' });
  assert.deepEqual(spec.runner.volumeMounts, [{ name: 'results', mountPath: '/results' }]);
  assert.equal(spec.runner.volumes[0]?.persistentVolumeClaim.claimName, 'results');
});

test('bad options are refused all at once, each with its fix', async () => {
  await assert.rejects(
    testRunManifest({
      script: 'nope',
      parallelism: 0,
      name: 'Bad_Name',
      env: { STEPS: '1, 2' },
      image: 'grafana/k6',
      resultsClaim: 'results',
    }),
    (error: unknown) => {
      assert.ok(isPlateauError(error));
      for (const setting of ['--script', '--parallelism', '--name', '-e']) {
        assert.ok(error.message.includes(setting), `${setting} named in: ${error.message}`);
      }
      return true;
    },
  );
});

test('plateau testrun writes the manifest; a bad flag exits 104', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-testrun-'));
  try {
    const file = join(dir, 'run.yaml');
    const ok = await plateau([
      ...[
        'testrun',
        '--script',
        'constant-rate',
        '-e',
        'RATE=50',
        '-e',
        'BASE_URL=http://api:3000',
        '-o',
        file,
      ],
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    const run = parseAllDocuments(await readFile(file, 'utf8'))
      .map((d) => d.toJS() as Manifest | null)
      .find((d) => d?.kind === 'TestRun');
    assert.equal(run?.metadata.name, 'plateau-constant-rate');
    const bad = await plateau(['testrun', '--parallelism', 'many', '-e', 'BASE_URL=http://api:3000']);
    assert.equal(bad.code, 104);
    assert.match(bad.stderr, /--parallelism/);
    // The script's settings are checked here, not in every runner pod; a cluster needs BASE_URL.
    const settings = await plateau(['testrun', '-e', 'STEPS=abc', '-o', file]);
    assert.equal(settings.code, 104);
    assert.match(settings.stderr, /-e BASE_URL: is required for a TestRun/);
    assert.match(settings.stderr, /-e STEPS: "abc" is not accepted/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
