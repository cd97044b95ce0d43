import { withDotEnv } from '../config.ts';
import { createDelegationStore } from '../store/delegation-store.ts';
import { DELEGATIONS_USAGE, delegationsCommand, isDelegationsWork } from './delegations-command.ts';
import { openOperatorDatabase } from './operator-database.ts';
import { answeredWithUsage } from './usage.ts';

// `npm run delegations -- …` (in the image too; or `node dist/operator/delegations-cli.js …`): an
// admin sees and clears people's delegates while away, on the database the app uses. It never
// creates or migrates a database. `--help` needs nothing: no database, no settings.

const args = process.argv.slice(2);
if (answeredWithUsage(args, DELEGATIONS_USAGE, isDelegationsWork(args))) process.exit();
const database = await openOperatorDatabase(withDotEnv(process.env));
try {
  process.exitCode = await delegationsCommand(args, {
    delegations: createDelegationStore(database.db),
    now: () => new Date(),
    out: (line) => process.stdout.write(`${line}\n`),
  });
} finally {
  await database.close();
}
