// A study of your own endpoint without writing a script: --endpoint, --method, --body,
// --header and --expect-status on `plateau run`, and `plateau check` reusing them.
// test-run: load
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { AnalysisResult, RunManifest } from '../contract/index.ts';
import { plateau } from './helpers/cli.ts';
import { startTestServer } from './helpers/test-server.ts';

const out = await mkdtemp(join(tmpdir(), 'plateau-own-request-'));

test('run sends the given POST with its body and headers, counts 201 as success, and check sends it again', async () => {
  const received: { method: string; url: string; body: string; type: string; step: string }[] = [];
  const server = await startTestServer({
    handle: (req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        received.push({
          method: req.method ?? '',
          url: req.url ?? '',
          body,
          type: String(req.headers['content-type']),
          step: String(req.headers['x-load-step']),
        });
        res.writeHead(req.url === '/steps' ? 404 : 201);
        res.end();
      });
    },
  });
  const bodyFile = join(out, 'order.json');
  await writeFile(bodyFile, '{"sku":"a1","qty":2}');
  const result = await plateau([
    'run',
    ...['--target', server.url, '--endpoint', '/orders', '--method', 'POST', '--body', `@${bodyFile}`],
    ...['--header', 'Content-Type: application/json', '--expect-status', '201'],
    ...['--steps', '5,10', '--hold', '2', '--ramp', '1', '--recovery', '2', '--out', out, '--json'],
  ]);
  assert.equal(result.code, 0, result.stderr);
  const orders = received.filter((r) => r.url === '/orders');
  assert.ok(orders.length >= 20, `${orders.length} requests`);
  for (const r of orders) {
    assert.equal(r.method, 'POST');
    assert.equal(r.body, '{"sku":"a1","qty":2}');
    assert.equal(r.type, 'application/json');
    assert.match(r.step, /^(r005|r010|drain|recovery)$/);
  }
  const analysis = JSON.parse(result.stdout) as AnalysisResult & { runDir: string };
  const manifest = JSON.parse(await readFile(join(analysis.runDir, 'run.json'), 'utf8')) as RunManifest;
  assert.deepEqual(manifest.request, {
    method: 'POST',
    endpoint: '/orders',
    headers: { 'Content-Type': 'application/json' },
    body: { file: bodyFile },
    expectStatus: '201',
  });
  assert.equal(manifest.config['--endpoint']?.source, 'flag');
  for (const row of analysis.table) {
    assert.equal(row.failureRate, 0, `${row.step}: 201 is the expected status, so nothing failed`);
  }

  const before = received.length;
  const again = await plateau(['check', '--record', analysis.runDir, '--duration', '2s', '--out', out, '-q']);
  assert.equal(again.code, 0, again.stderr);
  const checked = received.slice(before).filter((r) => r.url === '/orders');
  assert.ok(checked.length >= 5, `the check sent ${checked.length} of the recorded POSTs`);
  assert.ok(
    checked.every((r) => r.method === 'POST' && r.body === '{"sku":"a1","qty":2}' && r.step === 'check'),
  );
});

test('check refuses a bad --db before it creates a run directory', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-check-db-'));
  const result = await plateau(['check', '--rate', '10', '--db', 'foo', '--out', dir]);
  assert.equal(result.code, 104, result.stderr);
  assert.match(result.stderr, /--db: is neither "embedded" nor a postgres:\/\/ URL/);
  assert.deepEqual(await readdir(dir), [], 'no run directory');
});

test("your own k6 script is the study and the check: 'plateau/k6' gives it the options and step tags", async () => {
  const seen: { url: string; step: string }[] = [];
  const server = await startTestServer({
    handle: (req, res) => {
      seen.push({ url: req.url ?? '', step: String(req.headers['x-load-step']) });
      req.resume();
      res.writeHead(req.url === '/steps' ? 404 : 200);
      res.end('{"ok":true}');
    },
  });
  const script = join(out, 'orders.ts');
  // Written as k6's documentation writes scripts: the blocking http.post, check, a group.
  await writeFile(
    script,
    `import http from 'k6/http';
import { check, group } from 'k6';
import { study, studyOptions, tagged } from 'plateau/k6';

export const options = studyOptions();

export default function (): void {
  group('order', () => {
    const res = http.post(\`\${study.baseUrl}/api/orders\`, JSON.stringify({ sku: 'a1' }), tagged({ headers: { 'Content-Type': 'application/json' } }));
    check(res, { 'is 200': (r) => r.status === 200 });
  });
}
`,
  );
  const result = await plateau([
    'run',
    ...['--script', script, '--target', server.url],
    ...['--steps', '5,10', '--hold', '2', '--ramp', '1', '--recovery', '2', '--out', out, '--json'],
  ]);
  assert.equal(result.code, 0, result.stderr);
  const analysis = JSON.parse(result.stdout) as AnalysisResult & { runDir: string };
  assert.deepEqual(
    analysis.table.map((row) => row.step).filter((step) => step.startsWith('r')),
    ['r005', 'r010'],
    'the table has the steps the script tagged',
  );
  const orders = seen.filter((r) => r.url === '/api/orders');
  assert.ok(orders.length >= 20);
  assert.ok(
    orders.every((r) => /^(r005|r010|drain|recovery)$/.test(r.step)),
    'every request carries its step',
  );
  const manifest = JSON.parse(await readFile(join(analysis.runDir, 'run.json'), 'utf8')) as RunManifest;
  assert.equal(manifest.load.script, script);

  const before = seen.length;
  const short = ['--rate', '5', '--duration', '2', '--out', out, '-q'];
  const both = await plateau(['check', '--record', analysis.runDir, ...short]);
  assert.equal(both.code, 104, 'exactly one of --record and --rate');
  const again = await plateau(['check', '--script', script, '--target', server.url, ...short]);
  assert.equal(again.code, 0, again.stderr);
  const checked = seen.slice(before).filter((r) => r.url === '/api/orders');
  assert.ok(
    checked.length >= 5 && checked.every((r) => r.step === 'check'),
    `${checked.length} checked, tagged check`,
  );
});

test('a script that tags nothing is still analysed, by time window, and the record says so', async () => {
  const server = await startTestServer();
  const script = join(out, 'untagged.js');
  await writeFile(
    script,
    `import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 10, duration: '3s', preAllocatedVUs: 5 } } };
export default function () { http.get(__ENV.BASE_URL + '/'); }
`,
  );
  const result = await plateau(['run', '--script', script, '--target', server.url, '--out', out, '--json']);
  assert.equal(result.code, 0, result.stderr);
  const analysis = JSON.parse(result.stdout) as AnalysisResult & { runDir: string };
  assert.match(analysis.verdict.notes.join(' '), /no step tag/);
  assert.ok(server.requests.length >= 25);
});
