import { readFileSync, writeFileSync } from 'node:fs';
import type { AccountLinking } from '../approvals/account-links.ts';
import { withDotEnv } from '../config.ts';
import { createAccountLinkStore } from '../store/account-link-store.ts';
import { ACCOUNTS_USAGE, accountsCommand, isAccountsWork } from './accounts-command.ts';
import { openOperatorDatabase } from './operator-database.ts';
import { answeredWithUsage } from './usage.ts';

// `npm run accounts -- …` (in the image too; or `node dist/operator/accounts-cli.js …`): an
// admin links Slack people to service logins, one by one or from a CSV, on the database the app
// uses (DATABASE_URL from the environment or .env, else the app's default file). It never creates
// or migrates a database. `--help` needs nothing: no database, no settings.

const args = process.argv.slice(2);
if (answeredWithUsage(args, ACCOUNTS_USAGE, isAccountsWork(args))) process.exit();
const env = withDotEnv(process.env);
const linking = (env.ACCOUNT_LINKING || 'admin').trim();
if (linking !== 'self' && linking !== 'admin' && linking !== 'off') {
  console.error(`ACCOUNT_LINKING: must be one of self, admin, off; was "${linking}"`);
  process.exit(2);
}
const database = await openOperatorDatabase(env);
try {
  process.exitCode = await accountsCommand(args, {
    links: createAccountLinkStore(database.db, database.dialect),
    linking: linking as AccountLinking,
    now: () => new Date(),
    out: (line) => process.stdout.write(`${line}\n`),
    readFile: (path) => readFileSync(path, 'utf8'),
    writeFile: (path, text) => writeFileSync(path, text, { flag: 'wx' }),
  });
} finally {
  await database.close();
}
