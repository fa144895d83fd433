// What a capacity record needs to know about the database.

/** Where the database came from. */
export type DatabaseKind = 'embedded' | 'url';

/** Connection-slot facts read from the server (`SHOW max_connections` etc.). */
export interface DatabaseInfo {
  kind: DatabaseKind;
  /** `SHOW server_version`, e.g. `18.0`. */
  serverVersion: string;
  maxConnections: number;
  superuserReservedConnections: number;
  /** `reserved_connections` (PostgreSQL 16+); 0 on older servers. */
  reservedConnections: number;
  /** Slots ordinary roles can use: max − superuser_reserved − reserved. */
  ordinarySlots: number;
}
