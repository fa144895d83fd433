// The embedded cluster leaves nothing behind, however the process ends.
// test-run: own-process (it looks for processes it left behind, by its PLATEAU_TEST_MARK)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { processesMatching, waitFor } from '../../test/helpers/processes.ts';
import { freePort, startEmbeddedPostgres } from './embedded-postgres.ts';

const fixture = fileURLToPath(new URL('../../test/fixtures/db-lifecycle.ts', import.meta.url));

/** Runs the fixture in `mode`, optionally signals it once the database is up. */
async function runFixture(mode: string, signal?: NodeJS.Signals) {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, mode], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const started = new Promise<{ dataDir: string }>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = stdout.split('\n')[0];
      if (stdout.includes('\n') && line) resolve(JSON.parse(line));
    });
    child.on('exit', () => reject(new Error(`fixture exited before starting: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const { dataDir } = await started;
  assert.ok(processesMatching(dataDir).length > 0, 'postgres was running');
  // The fixture ends only once told to: ending on its own could stop the server before the
  // look above, and that look would fail under a busy machine.
  if (signal) child.kill(signal);
  else child.stdin.end('go\n');
  const code = await exited;
  return { dataDir, code, stderr };
}

async function assertNothingLeft(dataDir: string) {
  const gone = await waitFor(() => processesMatching(dataDir).length === 0, 10_000);
  assert.ok(gone, `no postgres process left for ${dataDir}: ${processesMatching(dataDir).join(',')}`);
  assert.equal(existsSync(dataDir), false, 'data directory deleted');
}

test('stop() stops the cluster and deletes its directory', async () => {
  const { dataDir, code } = await runFixture('stop');
  assert.equal(code, 0);
  await assertNothingLeft(dataDir);
});

test('a normal exit without stop() leaves nothing behind', async () => {
  const { dataDir, code } = await runFixture('exit');
  assert.equal(code, 0);
  await assertNothingLeft(dataDir);
});

test('an uncaught error leaves nothing behind', async () => {
  const { dataDir, code, stderr } = await runFixture('throw');
  assert.notEqual(code, 0);
  assert.match(stderr, /boom/);
  await assertNothingLeft(dataDir);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`${signal} leaves nothing behind`, async () => {
    const { dataDir, code } = await runFixture('signal', signal);
    assert.equal(code, signal === 'SIGINT' ? 130 : 143);
    await assertNothingLeft(dataDir);
  });
}

test('the cluster reports its version and connection slots', async () => {
  const db = await startEmbeddedPostgres();
  try {
    assert.equal(db.info.kind, 'embedded');
    assert.match(db.info.serverVersion, /^18\./);
    assert.equal(
      db.info.ordinarySlots,
      db.info.maxConnections - db.info.superuserReservedConnections - db.info.reservedConnections,
    );
    assert.ok(db.info.ordinarySlots > 0);
  } finally {
    await db.stop();
  }
});

test('a postmaster killed with SIGKILL: death says so, and stop() returns and deletes the directory', async () => {
  const db = await startEmbeddedPostgres();
  assert.ok(db.death, 'an embedded cluster is watched');
  const dataDir = db.dataDir!;
  // postmaster.pid's first line is the server's pid (PostgreSQL's own record of it).
  const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(pid, 'SIGKILL');
  const death = await db.death;
  assert.equal(death.how, 'killed by SIGKILL');
  assert.match(death.logTail, /ready to accept connections/);
  // Before the fix stop() waited for an exit event that had already been emitted, forever.
  await db.stop();
  await assertNothingLeft(dataDir);
});

test('a port taken between its choice and the server binding it: the next one is tried', async () => {
  // Held by a real listener, as a client's ephemeral port or another server may hold it.
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const taken = (holder.address() as AddressInfo).port;
  const offered: number[] = [];
  const lines: string[] = [];
  const db = await startEmbeddedPostgres({
    choosePort: async () => {
      const port = offered.length === 0 ? taken : await freePort();
      offered.push(port);
      return port;
    },
    onLog: (line) => lines.push(line),
  });
  try {
    assert.equal(offered.length, 2, `ports tried: ${offered}`);
    assert.equal(new URL(db.url).port, String(offered[1]));
    assert.ok(
      lines.some((l) => l.includes('Address already in use')),
      lines.join('\n'),
    );
    assert.equal(db.info.kind, 'embedded');
  } finally {
    await db.stop();
    holder.close();
  }
});
