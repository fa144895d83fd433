// A database plateau can point the service at: embedded, or the user's DATABASE_URL.
import type { DatabaseInfo } from '../../contract/index.ts';
import { ERROR_CODES, PlateauError } from '../../contract/index.ts';
import { readDatabaseInfo, redactUrl } from './database-info.ts';
import { startEmbeddedPostgres } from './embedded-postgres.ts';

/** A running database. */
export interface Database {
  /** Connection URL including credentials: never print it, print `redactUrl(url)`. */
  url: string;
  info: DatabaseInfo;
  /** Data directory of an embedded cluster; undefined for DATABASE_URL. */
  dataDir?: string;
  /** Stops an embedded cluster and deletes its directory; a no-op for DATABASE_URL. */
  stop: () => Promise<void>;
  /**
   * Resolves when an embedded cluster's server process ends without `stop()` (killed, or
   * crashed), with how; undefined for a DATABASE_URL, which plateau does not watch.
   */
  death?: Promise<DatabaseDeath>;
}

/** How a database plateau started ended on its own. */
export interface DatabaseDeath {
  /** `killed by SIGKILL`, `exit code 1`. */
  how: string;
  /** Its log's last lines. */
  logTail: string;
}

/**
 * Opens the database a command should use: `databaseUrl` when given (nothing is started
 * or stopped), otherwise a new embedded PostgreSQL.
 */
export async function openDatabase(options: {
  databaseUrl?: string | undefined;
  onLog?: (line: string) => void;
}): Promise<Database> {
  const { databaseUrl } = options;
  if (databaseUrl === undefined || databaseUrl === '') {
    return startEmbeddedPostgres(options.onLog ? { onLog: options.onLog } : {});
  }
  try {
    const info = await readDatabaseInfo(databaseUrl, 'url');
    return { url: databaseUrl, info, stop: async () => undefined };
  } catch (error) {
    throw new PlateauError(
      ERROR_CODES.DATABASE,
      `cannot reach the database at ${redactUrl(databaseUrl)}: ${error instanceof Error ? error.message : String(error)}`,
      {
        hint: 'check DATABASE_URL (host, port, user, password), or unset it to use an embedded PostgreSQL',
        cause: error,
      },
    );
  }
}
