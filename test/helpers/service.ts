// Starts the real statement service against a real embedded PostgreSQL for a test file.
import { after, before } from 'node:test';
import { type Database, openDatabase } from '../../harness/db/database.ts';
import { loadServiceConfig, type ServiceConfig } from '../../target-service/config.ts';
import { type StatementService, startStatementService } from '../../target-service/statement-service.ts';

/**
 * Registers before/after hooks that start one embedded PostgreSQL for the file, and
 * returns a function that starts a service on port 0 with the given settings. Services
 * started through it are closed after the file's tests.
 */
export function useStatementServices(): (
  overrides?: Partial<ServiceConfig>,
) => Promise<StatementService & { logs: string[] }> {
  let db: Database | undefined;
  const started: StatementService[] = [];
  before(async () => {
    db = await openDatabase({ databaseUrl: process.env.PLATEAU_TEST_DATABASE_URL });
  });
  after(async () => {
    for (const service of started) await service.close();
    await db?.stop();
  });
  return async (overrides = {}) => {
    if (!db) throw new Error('database not started: call inside a test');
    const config = loadServiceConfig({}, { port: 0, ...overrides });
    const logs: string[] = [];
    const service = await startStatementService(config, db.url, { log: (line) => logs.push(line) });
    started.push(service);
    return Object.assign(service, { logs });
  };
}
