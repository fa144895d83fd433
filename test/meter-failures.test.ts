// A study never fails because its monitoring did: a metrics endpoint that answers 404, one
// that stops answering mid-run, and a declared resource whose series never appear each end
// as a note in the record, and the verdict is the one plateau's own figures give.
// test-run: load
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { AnalysisResult, RunManifest } from '../contract/index.ts';
import { plateau } from './helpers/cli.ts';
import { SMALL_STUDY } from './helpers/small-study.ts';

const out = await mkdtemp(join(tmpdir(), 'plateau-meter-failures-'));
after(() => rm(out, { recursive: true, force: true }));

/** A server on port 0 answering every request with `handler`; closed after the file. */
async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

test('failing metrics sources and a declared resource never seen are notes; the verdict stands on GET /steps', async () => {
  const missing = await serve((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('no such page');
  });
  // Answers HikariCP-like meters for its first three readings, then closes its socket on
  // every request: a service whose metrics endpoint died mid-run.
  let readings = 0;
  const dying = await serve((req, res) => {
    readings++;
    if (readings > 3) {
      req.socket.destroy();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(
      'hikaricp_connections_active{pool="side"} 1\nhikaricp_connections_max{pool="side"} 10\nhikaricp_connections_pending{pool="side"} 0\n',
    );
  });
  const config = join(out, 'plateau.config.json');
  await writeFile(
    config,
    JSON.stringify({
      resources: [
        { name: 'orders queue', kind: 'queue', depth: 'orders_queue_depth', cap: 'orders_queue_cap' },
      ],
    }),
  );
  const result = await plateau([
    'run',
    ...SMALL_STUDY,
    ...['--recovery', '4'],
    ...['--metrics', `${missing.url}/actuator/prometheus`, '--metrics', `${dying.url}/metrics`],
    ...['--config', config, '--json', '--out', out],
  ]);
  assert.equal(result.code, 0, result.stderr);
  const analysis = JSON.parse(result.stdout) as AnalysisResult & { runDir: string };
  const record = await readFile(join(analysis.runDir, 'record.txt'), 'utf8');
  // plateau's own figures name the pool; the side pool that stopped reporting is not named.
  assert.equal(analysis.verdict.firstLimit.resource, 'pool', record);
  assert.equal(analysis.verdict.firstLimit.name, undefined, record);
  assert.match(
    record,
    /^note: +metrics http:\/\/127\.0\.0\.1:\d+\/actuator\/prometheus: (\d+) of \1 readings failed \(HTTP 404/m,
  );
  assert.match(record, /^note: +metrics http:\/\/127\.0\.0\.1:\d+\/metrics: \d+ of \d+ readings failed/m);
  assert.match(record, /^note: +declared resource "orders queue": .*never appeared/m);
  const manifest = JSON.parse(await readFile(join(analysis.runDir, 'run.json'), 'utf8')) as RunManifest;
  assert.equal(manifest.status, 'completed');
  assert.equal(manifest.meters!.declared[0]!.name, 'orders queue');
});
