// Debian's pgbouncer in front of a PostgreSQL, and Debian's prometheus-pgbouncer-exporter
// reading it, each on a free loopback port, for suites whose limit is pgbouncer's pool.

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { freePort } from '../../harness/db/embedded-postgres.ts';
import { registerCleanup } from '../../harness/lifecycle.ts';
import { isExecutable } from './processes.ts';

const PGBOUNCER_BIN = '/usr/sbin/pgbouncer';
const EXPORTER_BIN = '/usr/bin/prometheus-pgbouncer-exporter';
/**
 * pgbouncer refuses to run as root; its own `-u USER` (pgbouncer(1)) switches to USER after
 * reading its files and binding. `nobody` exists on every Debian system, where the
 * `postgres` user embedded PostgreSQL runs as exists only once a cluster has been started.
 */
const UNPRIVILEGED_USER = 'nobody';

/** A running pgbouncer. */
export interface Pgbouncer {
  /** postgres:// through pgbouncer, same user, password and database as `databaseUrl`. */
  url: string;
  /** The admin console (`SHOW POOLS`, `SHOW STATS`…), database `pgbouncer`, as the same user. */
  adminUrl: string;
  port: number;
  /** The user and password the admin console takes (the exporter logs in with them). */
  user: string;
  password: string;
  /** The database name clients connect to, as pgbouncer's pools and the exporter name it. */
  database: string;
  /** The last lines pgbouncer logged, for a failing test's message. */
  logTail(): string[];
  /** Shuts pgbouncer down (SIGTERM: immediate), waits for it to exit, deletes its directory. */
  stop(): Promise<void>;
}

/** A running prometheus-pgbouncer-exporter. */
export interface PgbouncerExporter {
  /** Its `/metrics` URL. */
  metricsUrl: string;
  logTail(): string[];
  stop(): Promise<void>;
}

/**
 * Null when pgbouncer and its exporter can be started here, else one line saying what is
 * missing, for a suite to print and skip with (`.ci/run` installs both).
 */
export function pgbouncerAvailable(): string | null {
  if (!isExecutable(PGBOUNCER_BIN)) return `no ${PGBOUNCER_BIN}: apt-get install pgbouncer`;
  if (!isExecutable(EXPORTER_BIN)) return `no ${EXPORTER_BIN}: apt-get install prometheus-pgbouncer-exporter`;
  const python = exporterPython();
  if (!isExecutable(python)) return `no ${python}, the interpreter ${EXPORTER_BIN} names`;
  if (userInfo().uid === 0 && spawnSync('id', ['-u', UNPRIVILEGED_USER]).status !== 0) {
    return `running as root and there is no '${UNPRIVILEGED_USER}' user for pgbouncer to switch to`;
  }
  return null;
}

/** Options for {@link startPgbouncer}. */
export interface PgbouncerOptions {
  /** The PostgreSQL behind it, postgres://user:password@host:port/database. */
  databaseUrl: string;
  /** Server connections per (database, user) pool: `default_pool_size`. */
  poolSize: number;
  poolMode?: 'session' | 'transaction' | 'statement';
  /** Client connections pgbouncer accepts in all. */
  maxClientConn?: number;
}

/**
 * Starts `/usr/sbin/pgbouncer` on a free 127.0.0.1 port with a generated ini and userlist
 * in a new temporary directory (as `nobody` through `-u` when this process is root), and
 * resolves once it logs that it is up and listening. Rejects with pgbouncer's log when it
 * exits first or is not up within 10 s. It is stopped by `stop()`, and killed if the test
 * process exits without.
 */
export async function startPgbouncer(options: PgbouncerOptions): Promise<Pgbouncer> {
  const target = new URL(options.databaseUrl);
  const user = decodeURIComponent(target.username) || 'postgres';
  const password = decodeURIComponent(target.password);
  const database = decodeURIComponent(target.pathname.slice(1)) || user;
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'plateau-pgbouncer-'));
  const quote = (text: string) => `"${text.replaceAll('"', '""')}"`;
  const ini = [
    '[databases]',
    `${database} = host=${target.hostname.replace(/^\[|\]$/g, '')} port=${target.port || 5432} dbname=${database}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    // No Unix socket: nothing to collide with in /tmp.
    'unix_socket_dir =',
    // The userlist holds the password in clear, so pgbouncer can answer the server's SCRAM.
    `auth_type = ${password ? 'scram-sha-256' : 'trust'}`,
    `auth_file = ${join(dir, 'userlist.txt')}`,
    `admin_users = ${user}`,
    `pool_mode = ${options.poolMode ?? 'transaction'}`,
    `default_pool_size = ${options.poolSize}`,
    'min_pool_size = 0',
    'reserve_pool_size = 0',
    `max_client_conn = ${options.maxClientConn ?? 200}`,
    // JDBC sends it at login; pgbouncer would refuse the connection without this.
    'ignore_startup_parameters = extra_float_digits',
    '',
  ].join('\n');
  await writeFile(join(dir, 'pgbouncer.ini'), ini, { mode: 0o600 });
  await writeFile(join(dir, 'userlist.txt'), `${quote(user)} ${quote(password)}\n`, { mode: 0o600 });
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    // pgbouncer reads both files again as that user on a reload (SIGHUP).
    const uid = Number(spawnSync('id', ['-u', UNPRIVILEGED_USER], { encoding: 'utf8' }).stdout);
    const gid = Number(spawnSync('id', ['-g', UNPRIVILEGED_USER], { encoding: 'utf8' }).stdout);
    for (const path of [dir, join(dir, 'pgbouncer.ini'), join(dir, 'userlist.txt')])
      await chown(path, uid, gid);
  }
  const args = [...(asRoot ? ['-u', UNPRIVILEGED_USER] : []), join(dir, 'pgbouncer.ini')];
  const child = spawn(PGBOUNCER_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = watchOutput(child);
  const { stop, unregister } = stoppable(child, 'pgbouncer', () => rm(dir, { recursive: true, force: true }));
  try {
    // pgbouncer logs `process up: PgBouncer 1.18.0, …` once it listens on every address.
    await output.waitForLine(/process up:/, 10_000);
  } catch (error) {
    await stop();
    unregister();
    throw new Error(`pgbouncer did not start: ${(error as Error).message}\n${output.tail().join('\n')}`);
  }
  const credentials = `${encodeURIComponent(user)}${password ? `:${encodeURIComponent(password)}` : ''}@`;
  return {
    url: `postgres://${credentials}127.0.0.1:${port}/${encodeURIComponent(database)}`,
    adminUrl: `postgres://${credentials}127.0.0.1:${port}/pgbouncer`,
    port,
    user,
    password,
    database,
    logTail: output.tail,
    stop: async () => {
      unregister();
      await stop();
    },
  };
}

/**
 * Debian bookworm's exporter (1.7) reads SHOW STATS's `total_requests`, a column pgbouncer
 * 1.8 replaced by `total_query_count`: against bookworm's own pgbouncer (1.18) it dies at
 * start-up with `KeyError: 'total_requests'`. This runs the installed exporter unchanged
 * (its collectors, metric names and HTTP server) with the old column filled from the new
 * one where it is missing.
 */
const EXPORTER_SHIM = `
import sys
from prometheus_pgbouncer_exporter import collectors, utils
read_columns = utils.get_data_by_named_column
def read_with_old_columns(connection, key):
    rows = read_columns(connection, key)
    if key == 'STATS':
        for row in rows:
            if 'total_requests' not in row and 'total_query_count' in row:
                row['total_requests'] = row['total_query_count']
    return rows
collectors.get_data_by_named_column = read_with_old_columns
from prometheus_pgbouncer_exporter.cli import main
sys.argv[0] = 'prometheus-pgbouncer-exporter'
main()
`;

/** The interpreter on the exporter's `#!` line (Debian's python3, not one earlier on PATH). */
function exporterPython(): string {
  try {
    const line = readFileSync(EXPORTER_BIN, 'utf8').split('\n', 1)[0]!;
    return line.startsWith('#!') ? line.slice(2).trim().split(/\s+/)[0]! : '/usr/bin/python3';
  } catch {
    return '/usr/bin/python3';
  }
}

/**
 * Starts Debian's prometheus-pgbouncer-exporter on a free 127.0.0.1 port, logged in to
 * `pgbouncer`'s admin console, and resolves once its `/metrics` answers with the pool size
 * of pgbouncer's database. Rejects with the exporter's log when it exits first or does not
 * answer so within 15 s.
 */
export async function startPgbouncerExporter(options: { pgbouncer: Pgbouncer }): Promise<PgbouncerExporter> {
  const { pgbouncer } = options;
  const port = await freePort();
  const args = [
    '-c',
    EXPORTER_SHIM,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--pgbouncer-host',
    '127.0.0.1',
    '--pgbouncer-port',
    String(pgbouncer.port),
    '--pgbouncer-user',
    pgbouncer.user,
  ];
  // configargparse would read these from the environment when set: only the flags count here.
  const env: NodeJS.ProcessEnv = { ...process.env, PGPASSWORD: pgbouncer.password };
  for (const name of [
    'CONFIG',
    'PORT',
    'HOST',
    'PGBOUNCER_PORT',
    'PGBOUNCER_USER',
    'PGBOUNCER_HOST',
    'PGBOUNCER_DATABASES',
  ]) {
    delete env[name];
  }
  const child = spawn(exporterPython(), args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  const output = watchOutput(child);
  const { stop, unregister } = stoppable(child, 'prometheus-pgbouncer-exporter', async () => undefined);
  const metricsUrl = `http://127.0.0.1:${port}/metrics`;
  try {
    // `Listing on port …` is logged once the HTTP server is bound, before it serves.
    await output.waitForLine(/Listing on port/, 15_000);
    const { statusCode, body } = await request(metricsUrl, { headersTimeout: 5000, bodyTimeout: 5000 });
    const text = await body.text();
    const poolSize = `pgbouncer_pool_size{database="${pgbouncer.database}"}`;
    if (statusCode !== 200 || !text.includes(poolSize)) {
      throw new Error(`/metrics answered ${statusCode} without ${poolSize}:\n${text.slice(0, 2000)}`);
    }
  } catch (error) {
    await stop();
    unregister();
    throw new Error(
      `the pgbouncer exporter did not start: ${(error as Error).message}\n${output.tail().join('\n')}`,
    );
  }
  return {
    metricsUrl,
    logTail: output.tail,
    stop: async () => {
      unregister();
      await stop();
    },
  };
}

/** A child's stdout and stderr as lines: the last 40 kept, and a wait for one that matches. */
function watchOutput(child: ChildProcess): {
  tail: () => string[];
  waitForLine: (pattern: RegExp, timeoutMs: number) => Promise<void>;
} {
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line);
      if (lines.length > 40) lines.shift();
      for (const listener of listeners) listener(line);
    });
  }
  const waitForLine = (pattern: RegExp, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        clearTimeout(timer);
        listeners.delete(onLine);
        child.off('exit', onExit);
        if (error) reject(error);
        else resolve();
      };
      const onLine = (line: string) => {
        if (pattern.test(line)) done();
      };
      const onExit = (code: number | null, signal: string | null) =>
        done(new Error(`it exited (${signal ?? `code ${code}`}) before logging ${pattern}`));
      const timer = setTimeout(
        () => done(new Error(`no line matching ${pattern} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      listeners.add(onLine);
      child.once('exit', onExit);
      if (lines.some((line) => pattern.test(line))) done();
    });
  return { tail: () => [...lines], waitForLine };
}

/**
 * stop(): SIGTERM, then SIGKILL after 5 s, resolving once the child has exited and `after`
 * ran; registered so that a test process that ends without calling it kills the child.
 */
function stoppable(
  child: ChildProcess,
  name: string,
  after: () => Promise<void>,
): { stop: () => Promise<void>; unregister: () => void } {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(killer);
      }
      await after();
    })();
    return stopping;
  };
  const unregister = registerCleanup({
    name,
    stop,
    stopSync: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  });
  return { stop, unregister };
}
