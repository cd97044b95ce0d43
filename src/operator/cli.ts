import { ConfigError, loadConfig } from '../config.ts';
import { createApprovalStore } from '../store/approval-store.ts';
import { openDatabase } from '../store/database.ts';
import { announcementsCommand } from './announcements-command.ts';

// `npm run announcements -- …`: the operator's commands, on the database DATABASE_URL names
// (the same .env/environment the app runs with).

let databaseUrl: string;
try {
  databaseUrl = loadConfig(process.env).databaseUrl;
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}
const database = await openDatabase(databaseUrl);
try {
  process.exitCode = await announcementsCommand(process.argv.slice(2), {
    store: createApprovalStore(database.db, database.dialect),
    now: () => new Date(),
    out: (line) => process.stdout.write(`${line}\n`),
  });
} finally {
  await database.close();
}
