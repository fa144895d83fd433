import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import pg from 'pg';
import { describeDatabaseError, isDatabaseUnavailable } from './database-errors.ts';

/** An error as node-postgres makes one from a server's ErrorResponse. */
function serverError(code: string, message: string): Error {
  const error = new pg.DatabaseError(message, 0, 'error');
  error.code = code;
  return error;
}

/** An error with a socket code, as net gives them. */
function socketError(code: string, message = `connect ${code} 127.0.0.1:5432`): Error {
  return Object.assign(new Error(message), { code });
}

test('errors that mean the database is out of reach, and errors that do not', () => {
  const cases: [unknown, boolean][] = [
    [socketError('ECONNREFUSED'), true], // nobody listens: stopped or killed
    [socketError('ECONNRESET', 'read ECONNRESET'), true], // the connection was reset under a query
    [socketError('EPIPE', 'write EPIPE'), true], // written to a closed socket
    [socketError('ETIMEDOUT'), true], // the TCP handshake timed out
    [socketError('EHOSTUNREACH'), true], // no route to the host
    [socketError('ENOTFOUND', 'getaddrinfo ENOTFOUND db'), true], // its name does not resolve
    [serverError('57P01', 'terminating connection due to administrator command'), true], // fast shutdown
    [serverError('57P02', 'terminating connection because of crash of another server process'), true],
    [serverError('57P03', 'the database system is shutting down'), true], // a connection during shutdown
    [serverError('08006', 'connection failure'), true], // class 08, connection exception
    [new Error('Connection terminated unexpectedly'), true], // the socket ended under a client
    [new Error('Connection terminated due to connection timeout'), true], // a new client took too long
    [new Error('Client has encountered a connection error and is not queryable'), true], // used after dying
    [new AggregateError([socketError('ECONNREFUSED')], ''), true], // IPv4 and IPv6 both refused
    [new Error('wrapped', { cause: socketError('ECONNREFUSED') }), true], // the cause decides
    [new Error('timeout exceeded when trying to connect'), false], // the pool's acquire timeout: overload
    [serverError('42601', 'syntax error at or near "SELEC"'), false], // a defect, not an outage
    [serverError('57014', 'canceling statement due to statement timeout'), false], // a slow query
    [serverError('53300', 'sorry, too many clients already'), false], // slots full: capacity, not absence
    [serverError('28P01', 'password authentication failed for user "app"'), false], // misconfiguration
    [socketError('ENOENT', 'no such file'), false], // an unrelated code
    ['ECONNREFUSED', false], // not an Error
    [undefined, false],
  ];
  for (const [error, expected] of cases)
    assert.equal(isDatabaseUnavailable(error), expected, describeDatabaseError(error));
});

test('a real refused connection is recognised, and described with its code', async () => {
  // A port that was free a moment ago: nobody listens there now.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'x', database: 'x', password: 'x' });
  const error = await client.connect().then(
    () => assert.fail('connected to a closed port'),
    (e: unknown) => e,
  );
  assert.equal(isDatabaseUnavailable(error), true);
  assert.match(describeDatabaseError(error), /ECONNREFUSED/);
});
