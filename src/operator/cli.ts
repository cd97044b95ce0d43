import { withDotEnv } from '../config.ts';
import { createApprovalStore } from '../store/approval-store.ts';
import { openDatabase } from '../store/database.ts';
import { announcementsCommand } from './announcements-command.ts';

// `npm run announcements -- …`: the operator's commands, on the database the app uses:
// DATABASE_URL from the environment or .env, else the app's default file.

const env = withDotEnv(process.env);
const database = await openDatabase(env.DATABASE_URL || './data/approvals.db');
try {
  process.exitCode = await announcementsCommand(process.argv.slice(2), {
    store: createApprovalStore(database.db, database.dialect),
    now: () => new Date(),
    out: (line) => process.stdout.write(`${line}\n`),
  });
} finally {
  await database.close();
}
