// Reads the connection-slot facts a capacity record states.
import pg from 'pg';
import type { DatabaseInfo, DatabaseKind } from '../../contract/index.ts';

const SLOTS_SQL = `
  SELECT current_setting('server_version') AS server_version,
         current_setting('max_connections')::int AS max_connections,
         current_setting('superuser_reserved_connections')::int AS superuser_reserved,
         coalesce(current_setting('reserved_connections', true), '0')::int AS reserved`;

/**
 * Connects once to `url` and reads the server version and connection slots.
 * `reserved_connections` exists from PostgreSQL 16 on; older servers report 0.
 */
export async function readDatabaseInfo(url: string, kind: DatabaseKind): Promise<DatabaseInfo> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    const { rows } = await client.query<{
      server_version: string;
      max_connections: number;
      superuser_reserved: number;
      reserved: number;
    }>(SLOTS_SQL);
    const row = rows[0]!;
    return {
      kind,
      serverVersion: row.server_version,
      maxConnections: row.max_connections,
      superuserReservedConnections: row.superuser_reserved,
      reservedConnections: row.reserved,
      ordinarySlots: row.max_connections - row.superuser_reserved - row.reserved,
    };
  } finally {
    await client.end();
  }
}

/** The URL with its password replaced by `****`, safe to print and log. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '****';
    return parsed.toString();
  } catch {
    // Not a URL we can parse: show only the scheme, never the rest.
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? '';
    return `${scheme}//<unparseable url hidden>`;
  }
}
