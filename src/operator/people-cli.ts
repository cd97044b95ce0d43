import { randomBytes } from 'node:crypto';
import { withDotEnv } from '../config.ts';
import { createPersonalDataStore } from '../store/personal-data-store.ts';
import { openOperatorDatabase } from './operator-database.ts';
import { isPeopleWork, PEOPLE_USAGE, peopleCommand } from './people-command.ts';
import { answeredWithUsage } from './usage.ts';

// `npm run people -- …` (in the image too; or `node dist/operator/people-cli.js …`): one
// person's data on request, exported or erased, on the database the app uses (DATABASE_URL from
// the environment or .env, else the app's default file). It never creates or migrates a
// database. `--help` needs nothing: no database, no settings.

const args = process.argv.slice(2);
if (answeredWithUsage(args, PEOPLE_USAGE, isPeopleWork(args))) process.exit();
const env = withDotEnv(process.env);
const database = await openOperatorDatabase(env);
try {
  process.exitCode = await peopleCommand(args, {
    data: createPersonalDataStore(database.db, database.dialect),
    token: () => randomBytes(5).toString('hex'),
    out: (line) => process.stdout.write(`${line}\n`),
  });
} finally {
  await database.close();
}
