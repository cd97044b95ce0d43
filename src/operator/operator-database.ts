import { DatabaseError, type DatabaseHandle, openDatabase } from '../store/database.ts';

/**
 * The database the app uses, for an operator command: DATABASE_URL (from the environment or
 * .env), else the app's default file. Never created or migrated (a rollback must find the schema
 * it left); one that cannot be opened is said in one line, and the command exits 1.
 */
export function openOperatorDatabase(
  env: Record<string, string | undefined>,
): Promise<DatabaseHandle> {
  return openDatabase(env.DATABASE_URL || './data/approvals.db', { migrate: false }).catch(
    (error: unknown) => {
      if (!(error instanceof DatabaseError)) throw error;
      console.error(error.message);
      process.exit(1);
    },
  );
}
