import { withDotEnv } from '../config.ts';
import { announcementStates } from '../store/announcement-states.ts';
import { approvalStory } from '../store/approval-story.ts';
import { createOutbox } from '../store/outbox-store.ts';
import {
  ANNOUNCEMENTS_USAGE,
  announcementsCommand,
  isAnnouncementsWork,
} from './announcements-command.ts';
import { openOperatorDatabase } from './operator-database.ts';
import { answeredWithUsage } from './usage.ts';

// `npm run announcements -- …` (in the image too; or `node dist/operator/cli.js …`): the
// operator's commands, on the database the app uses: DATABASE_URL from the environment or .env,
// else the app's default file. It never creates a database or migrates one (a rollback must find
// the schema it left). `--help` needs nothing: no database, no settings.

const args = process.argv.slice(2);
if (answeredWithUsage(args, ANNOUNCEMENTS_USAGE, isAnnouncementsWork(args))) process.exit();
const env = withDotEnv(process.env);
const database = await openOperatorDatabase(env);
try {
  process.exitCode = await announcementsCommand(args, {
    store: createOutbox(database.db, database.dialect),
    states: (ids) => announcementStates(database.db, ids),
    story: (djbh) => approvalStory(database.db, djbh),
    now: () => new Date(),
    out: (line) => process.stdout.write(`${line}\n`),
  });
} finally {
  await database.close();
}
