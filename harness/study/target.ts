// The reference target of a study or check: a database and the statement service.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { ERROR_CODES, PlateauError, type ServerStepReport } from '../../contract/index.ts';
import { engineNodeFlags } from '../../engine/node-flags.ts';
import { type Database, openDatabase } from '../db/database.ts';
import { registerCleanup } from '../lifecycle.ts';
import { type LoggedChild, spawnLogged, stopChild } from './child.ts';

/** `bin/plateau.js`, to start plateau's own commands as child processes. */
export const PLATEAU_BIN = fileURLToPath(new URL('../../bin/plateau.js', import.meta.url));

/** A started reference target. */
export interface ReferenceTarget {
  url: string;
  database: Database;
  service: LoggedChild;
  /** Stops the service, then the database (idempotent). */
  stop(): Promise<void>;
}

/**
 * Starts the database (`db`: 'embedded' or a URL) and `plateau serve` with the `service`
 * settings as a child process logging to `<dir>/service.log`. Both are registered with the
 * lifecycle, so a crash or signal never leaves them behind.
 */
export async function startReferenceTarget(options: {
  db: string;
  service: Record<string, string>;
  dir: string;
  progress: (phase: string) => void;
}): Promise<ReferenceTarget> {
  options.progress('starting the database');
  const database = await openDatabase({ databaseUrl: options.db === 'embedded' ? undefined : options.db });
  const unregisterDb = registerCleanup({ name: 'database', stop: () => database.stop() });
  options.progress('starting the statement service');
  const service = spawnLogged(
    process.execPath,
    [PLATEAU_BIN, 'serve'],
    { ...process.env, ...options.service, PORT: '0', DATABASE_URL: database.url },
    join(options.dir, 'service.log'),
  );
  const unregisterService = registerCleanup({
    name: 'statement service',
    stop: async () => void (await stopChild(service)),
  });
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      await stopChild(service);
      unregisterService();
      await database.stop();
      unregisterDb();
    })();
    return stopped;
  };
  try {
    const match = await service.waitFor(/listening on (http:\/\/\S+)/, 60_000);
    return { url: match[1]!, database, service, stop };
  } catch (error) {
    await stop();
    throw new PlateauError(
      ERROR_CODES.CHILD_FAILED,
      `the statement service did not start (${(error as Error).message})`,
      {
        hint: `its log ends with:\n${service.tail()}`,
      },
    );
  }
}

/** Starts the load: the embedded engine or a k6 binary, with k6's flags, logging to engine.log. */
export function startLoad(options: {
  engine: 'embedded' | 'k6';
  k6Bin: string;
  script: string;
  env: Record<string, string>;
  csv: string;
  summary: string;
  dir: string;
  /** Whether this k6 writes millisecond CSV stamps (see k6CsvMilliseconds); the engine always does. */
  csvMilliseconds?: boolean;
  /** `host:port` for the REST API (`--address`, the same flag on both engines); none by default. */
  address?: string;
  /** The embedded engine's workers (`--workers`): one process per core, as one test; one process when absent. */
  workers?: number;
}): { child: LoggedChild; command: string } {
  const flags = Object.entries(options.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  // Millisecond stamps place each response in its step's window exactly (k6 ≥ 0.44 has them).
  const csv =
    options.engine === 'embedded' || options.csvMilliseconds === true
      ? `csv=fileName=${options.csv},timeFormat=unix_milli`
      : `csv=${options.csv}`;
  const outputs = [
    '--out',
    csv,
    `--summary-export=${options.summary}`,
    ...(options.address ? ['--address', options.address] : []),
    ...(options.engine === 'embedded' && options.workers !== undefined
      ? ['--workers', String(options.workers)]
      : []),
  ];
  const [command, args] =
    options.engine === 'embedded'
      ? [
          process.execPath,
          [...engineNodeFlags(), PLATEAU_BIN, 'engine', 'run', options.script, '-q', ...flags, ...outputs],
        ]
      : [options.k6Bin, ['run', '--quiet', ...flags, ...outputs, options.script]];
  const child = spawnLogged(
    command,
    args,
    { ...process.env, K6_NO_USAGE_REPORT: 'true' },
    join(options.dir, 'engine.log'),
  );
  const unregister = registerCleanup({
    name: 'load engine',
    stop: async () => void (await stopChild(child, 'SIGINT', 20_000)),
  });
  void child.exited.then(unregister);
  return { child, command };
}

/** The message for a load process that could not run or failed. */
export function loadFailure(
  engine: 'embedded' | 'k6',
  command: string,
  code: number,
  child: LoggedChild,
): PlateauError {
  if (code === 127) {
    return new PlateauError(ERROR_CODES.CHILD_FAILED, `cannot run ${command}: ${child.tail(3)}`, {
      hint:
        engine === 'k6'
          ? 'install k6 (https://grafana.com/docs/k6/latest/set-up/install-k6/), set --k6-bin or K6_BIN, or use --engine embedded'
          : 'see engine.log',
    });
  }
  return new PlateauError(ERROR_CODES.CHILD_FAILED, `the load engine failed (exit ${code})`, {
    hint: `engine.log ends with:\n${child.tail()}`,
  });
}

/**
 * Whether a k6 (by its `k6 version` line) accepts `timeFormat=unix_milli` for CSV output:
 * added in k6 v0.44 (grafana/k6 pull request 2906). Unknown versions get k6's default
 * whole-second stamps, which analysis apportions.
 */
export function k6CsvMilliseconds(versionLine: string): boolean {
  const match = /v(\d+)\.(\d+)/.exec(versionLine);
  if (!match) return false;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return major >= 1 || minor >= 44;
}

/** The service's `GET /steps` report, or undefined when it does not answer one. */
export async function fetchSteps(url: string): Promise<ServerStepReport | undefined> {
  try {
    const res = await request(`${url}/steps`, { headersTimeout: 5000, bodyTimeout: 10_000 });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return undefined;
    }
    const body = (await res.body.json()) as ServerStepReport;
    return body.kind === 'plateau.server-steps' ? body : undefined;
  } catch {
    return undefined;
  }
}

/** Clears the service's step buckets so they hold this run only (a service without /steps is fine). */
export async function resetSteps(url: string): Promise<void> {
  await request(`${url}/steps/reset`, { method: 'POST' })
    .then((r) => r.body.dump())
    .catch(() => undefined);
}
