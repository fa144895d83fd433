// Which node-postgres errors mean the database is out of reach, rather than a bad query.

/**
 * Socket errors of a connection attempt or of an open connection: nobody listens on the
 * port (ECONNREFUSED), the peer closed or reset it (ECONNRESET, EPIPE), the host or its
 * name cannot be reached (EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ENOTFOUND, EAI_AGAIN), or
 * the TCP handshake timed out (ETIMEDOUT).
 */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs PostgreSQL sends when it ends or refuses sessions as a whole:
 * 57P01 admin_shutdown (a fast or smart shutdown, or pg_terminate_backend), 57P02
 * crash_shutdown (another backend crashed; every session is ended), 57P03
 * cannot_connect_now (starting up, shutting down, or in recovery). Class 08 (connection
 * exception) is matched by prefix.
 */
const SESSION_CODES = new Set(['57P01', '57P02', '57P03']);

/**
 * Messages node-postgres gives errors it makes itself, without a code: the socket ended
 * under a client, a client used after its connection failed, a new connection that did not
 * finish within the pool's `connectionTimeoutMillis`.
 */
const CLIENT_MESSAGES = [
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

/**
 * Whether `error` (from `pool.connect()`, a query, or a client's `'error'` event) means the
 * database could not be reached or ended the session, so the request could not be served
 * for a reason that is not its own and not the service's capacity. A query error (syntax,
 * constraint, statement timeout), the pool's own acquire timeout ("timeout exceeded when
 * trying to connect", a wait for a busy pool), anything that is not an Error: false.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || SESSION_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  // Node wraps several failed connection attempts (IPv4 and IPv6) in one AggregateError.
  if (error instanceof AggregateError && error.errors.some(isDatabaseUnavailable)) return true;
  if (CLIENT_MESSAGES.some((m) => error.message === m || error.message.startsWith(`${m}:`))) return true;
  return error.cause !== undefined && error.cause !== error && isDatabaseUnavailable(error.cause);
}

/** A short description of a database error for a log line: `ECONNREFUSED connect ECONNREFUSED 127.0.0.1:5432`. */
export function describeDatabaseError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const message = error.message || (error instanceof AggregateError ? String(error.errors[0]) : '');
  return typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message;
}
