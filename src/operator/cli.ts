import { withDotEnv } from '../config.ts';
import { announcementStates } from '../store/announcement-states.ts';
import { DatabaseError, openDatabase } from '../store/database.ts';
import { createOutbox } from '../store/outbox-store.ts';
import { announcementsCommand } from './announcements-command.ts';

// `npm run announcements -- …`: the operator's commands, on the database the app uses:
// DATABASE_URL from the environment or .env, else the app's default file. It never creates a
// database or migrates one: only the app's start does (a rollback must find the schema it left).

const env = withDotEnv(process.env);
const database = await openDatabase(env.DATABASE_URL || './data/approvals.db', {
  migrate: false,
}).catch((error: unknown) => {
  if (!(error instanceof DatabaseError)) throw error;
  console.error(error.message);
  process.exit(1);
});
try {
  process.exitCode = await announcementsCommand(process.argv.slice(2), {
    store: createOutbox(database.db, database.dialect),
    states: (ids) => announcementStates(database.db, ids),
    now: () => new Date(),
    out: (line) => process.stdout.write(`${line}\n`),
  });
} finally {
  await database.close();
}
