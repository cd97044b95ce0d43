import { withDotEnv } from '../config.ts';
import { BackupError, backupSqlite } from '../store/backup.ts';
import { dialectOf } from '../store/database.ts';
import { answeredWithUsage } from './usage.ts';

// `npm run backup -- <new file>` (compiled: `node dist/operator/backup-cli.js <new file>`): a
// consistent copy of the app's SQLite database while the app runs. DATABASE_URL from the
// environment or .env, else the app's default file, as the app itself reads it.

const USAGE = `Usage:
  npm run backup -- <new file>     copy the app's SQLite database, consistently, while it runs
It reads DATABASE_URL (from the environment or .env, else ./data/approvals.db), as the app does.
In the image: the same command, or node dist/operator/backup-cli.js <new file>.
Restore: stop the app, put the copy where DATABASE_URL points (removing any -wal/-shm files beside
it), start the app. Postgres: use pg_dump (docs/operating.md#backups-and-restores).`;

const args = process.argv.slice(2);
const [target, ...extra] = args;
const usable = target !== undefined && extra.length === 0 && !target.startsWith('-');
if (answeredWithUsage(args, USAGE, usable) || target === undefined) process.exit();

const url = withDotEnv(process.env).DATABASE_URL || './data/approvals.db';
if (dialectOf(url) === 'postgres') {
  console.error(
    'DATABASE_URL is Postgres: back it up with pg_dump (or the database service’s point-in-time recovery), as docs/operating.md#backups-and-restores says.',
  );
  process.exitCode = 2;
} else {
  try {
    const { target: written, pages } = await backupSqlite(url, target);
    process.stdout.write(`Backed up ${url} to ${written} (${pages} pages), checked.\n`);
  } catch (error) {
    if (!(error instanceof BackupError)) throw error;
    console.error(`Backup failed: ${error.message}`);
    process.exitCode = 1;
  }
}
