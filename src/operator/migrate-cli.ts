import type { Kysely } from 'kysely';
import { withDotEnv } from '../config.ts';
import { AppError } from '../errors.ts';
import { openDatabase } from '../store/database.ts';
import { appliedMigrations } from '../store/migrations.ts';
import { answeredWithUsage } from './usage.ts';

// `npm run migrate` (or `node dist/operator/migrate-cli.js`): brings the database to this
// release's schema and exits. A rollout runs it once before the new replicas start (the
// Kubernetes Job in deploy/kubernetes), so no replica's start waits for a migration; the app's own
// start still migrates whatever is left, so compose and a single process need nothing more.

const USAGE = `Usage:
  npm run migrate      migrate the database at DATABASE_URL (from the environment or .env, else
                       ./data/approvals.db) to this release's schema, then exit
Migrations only expand the schema, so the release running now keeps working on it. A database a
newer release already migrated is left as it is. In the image: the same command, or
node dist/operator/migrate-cli.js.`;

const args = process.argv.slice(2);
if (answeredWithUsage(args, USAGE, args.length === 0)) process.exit();

const env = withDotEnv(process.env);
const database = await openDatabase(env.DATABASE_URL || './data/approvals.db').catch(
  (error: unknown) => {
    // Unreachable, refused, or a SQLite file the app holds: one line saying which.
    if (!(error instanceof AppError)) throw error;
    console.error(error.message);
    process.exit(1);
  },
);
try {
  const applied = await appliedMigrations(database.db as Kysely<unknown>);
  const ahead =
    database.schemaAhead.length > 0
      ? `; a newer release ran ${database.schemaAhead.join(', ')} too, left as they are`
      : '';
  process.stdout.write(
    `The database at ${database.location} is migrated: ${applied.length} migrations, the latest ${applied.sort().at(-1)}${ahead}.\n`,
  );
} finally {
  await database.close();
}
