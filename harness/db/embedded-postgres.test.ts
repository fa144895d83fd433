// The embedded cluster leaves nothing behind, however the process ends.
// test-run: own-process (it looks for processes it left behind, by its PLATEAU_TEST_MARK)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { processesMatching, waitFor } from '../../test/helpers/processes.ts';
import { readDatabaseInfo } from './database-info.ts';
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

/** Starts a cluster in `baseDir`, keeping its log lines. */
async function startLogged(baseDir: string, options: { template?: false } = {}) {
  const lines: string[] = [];
  const db = await startEmbeddedPostgres({ baseDir, onLog: (line) => lines.push(line), ...options });
  return { db, lines };
}

/**
 * Runs `body` with a directory of its own for clusters and their template (so that damaging
 * the template cannot touch the one the other suites share), removed afterwards.
 */
async function inBaseDir(body: (base: string) => Promise<void>): Promise<void> {
  const base = await mkdtemp(join(tmpdir(), 'plateau-template-'));
  // Traversable by the `postgres` user that runs the server under root.
  await chmod(base, 0o755);
  try {
    await body(base);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

/** initdb says this as it starts; a cluster copied from the template never does. */
const INITDB_RAN = /The files belonging to this database system will be owned by user/;

const templatesIn = async (dir: string) =>
  (await readdir(dir)).filter((name) => name.startsWith('plateau-pg-template-'));

test('a cluster is copied from the template initdb made for the first, and has a password of its own', async () =>
  inBaseDir(async (base) => {
    const first = await startLogged(base);
    await first.db.stop();
    assert.ok(
      first.lines.some((l) => INITDB_RAN.test(l)),
      'the first ran initdb',
    );
    const [template] = await templatesIn(base);
    assert.ok(template, 'a template was saved');
    const passwordFile = join(base, template, 'plateau-template-password');
    assert.equal((await stat(passwordFile)).mode & 0o777, 0o600, 'only its owner reads the password');

    const second = await startLogged(base);
    try {
      assert.ok(!second.lines.some((l) => INITDB_RAN.test(l)), second.lines.join('\n'));
      assert.equal(second.db.info.kind, 'embedded', 'it answers on its own URL');
      assert.equal(existsSync(join(second.db.dataDir!, 'plateau-template-password')), false);
      // The template's password was replaced once the server was up.
      const templatePassword = (await readFile(passwordFile, 'utf8')).trim();
      const url = new URL(second.db.url);
      assert.notEqual(decodeURIComponent(url.password), templatePassword);
      url.password = encodeURIComponent(templatePassword);
      await assert.rejects(readDatabaseInfo(url.href, 'embedded'), /password authentication failed/);
    } finally {
      await second.db.stop();
    }
  }));

test('a damaged template is not used: initdb makes the cluster, and a new template', async () =>
  inBaseDir(async (base) => {
    await (await startLogged(base)).db.stop();
    const [template] = await templatesIn(base);
    assert.ok(template);
    // As a temp cleaner that removed some of its files would leave it.
    await rm(join(base, template, 'global', 'pg_control'));
    const next = await startLogged(base);
    try {
      assert.ok(
        next.lines.some((l) => /template did not start; running initdb instead/.test(l)),
        next.lines.join('\n'),
      );
      assert.ok(next.lines.some((l) => INITDB_RAN.test(l)));
      assert.equal(next.db.info.kind, 'embedded');
      assert.ok(existsSync(join(base, template, 'global', 'pg_control')), 'the template was made again');
    } finally {
      await next.db.stop();
    }
  }));

test('template: false runs initdb and leaves no template', async () =>
  inBaseDir(async (base) => {
    const { db, lines } = await startLogged(base, { template: false });
    await db.stop();
    assert.ok(lines.some((l) => INITDB_RAN.test(l)));
    assert.deepEqual(await templatesIn(base), []);
  }));
