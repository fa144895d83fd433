// `plateau serve`: the reference statement API on its own.
import type { Command } from 'commander';
import { loadServiceConfig, serviceSettingsHelp } from '../../target-service/config.ts';
import { startStatementService } from '../../target-service/statement-service.ts';
import { openDatabase } from '../db/database.ts';
import { redactUrl } from '../db/database-info.ts';
import { registerCleanup, setSignalPolicy } from '../lifecycle.ts';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .summary('run the reference statement API (embedded PostgreSQL unless DATABASE_URL is set)')
    .description(
      `Runs the reference statement API that capacity studies measure.

GET /statement?account=<id> borrows a connection from a node-postgres pool, runs a
stand-in query (SELECT pg_sleep), renders and gzips a statement, and answers 200.
Overload is refused with 503 + Retry-After (reason queue or timeout) unless SHED=off;
ADMISSION=on refuses at the door while the event loop is saturated (reason
admission); DEADLINES=on answers 504 to a request whose X-Request-Timeout-Ms has
passed, or will before its query ends (docs/reference-service.md, "Overload").
GET /steps reports per-step figures (read it after a run: it summarises every
histogram), GET /steps/live the current step and last second (cheap, for polling),
POST /steps/reset clears them, GET /metrics serves Prometheus text, GET /healthz
answers ok.

Settings come from environment variables (name, default, accepted values):
${serviceSettingsHelp()}

SIGTERM or Ctrl-C stops gracefully: in-flight requests finish, then the pool and
the embedded database close, and the process exits 0.`,
    )
    .option('-p, --port <port>', 'TCP port (overrides PORT; 0 picks a free one)')
    .addHelpText('after', '\nExamples:\n  plateau serve\n  POOL_MAX=8 SHED=off plateau serve --port 4000\n')
    .action(async (options: { port?: string }) => {
      const env = { ...process.env, ...(options.port === undefined ? {} : { PORT: options.port }) };
      const config = loadServiceConfig(env);
      setSignalPolicy({ exitCode: () => 0 });
      const db = await openDatabase({ databaseUrl: config.databaseUrl });
      const where = db.dataDir ? `embedded, data in ${db.dataDir}` : redactUrl(db.url);
      process.stderr.write(
        `database: PostgreSQL ${db.info.serverVersion} (${where}), ${db.info.ordinarySlots} connection slots for ordinary roles\n`,
      );
      const service = await startStatementService(config, db.url);
      registerCleanup({ name: 'statement service', stop: () => service.close() });
      process.stderr.write(
        `pool max ${config.poolMax}, query ${config.queryMs} ms, payload ${config.payloadKb} KB, ` +
          `shed ${config.shed ? `on (queue ${config.queueMax}, acquire timeout ${config.acquireTimeoutMs} ms)` : 'off'}\n`,
      );
      process.stdout.write(`listening on ${service.url}\n`);
    });
}
