import type { Kysely } from 'kysely';
import type { SubmissionGuard } from '../approvals/submission-guard.ts';
import type { Database } from './schema.ts';

// Slack drops a view a day or so after it was opened; its key is of no use long after that.
const KEEP_MS = 7 * 86_400_000;

export function createSubmissionGuard(db: Kysely<Database>): SubmissionGuard {
  return {
    async take(key, now) {
      const inserted = await db
        .insertInto('submission_keys')
        .values({ key, taken_at: now.getTime() })
        .onConflict((oc) => oc.column('key').doNothing())
        .executeTakeFirst();
      // Old keys go as new ones come; no schedule needed.
      await db
        .deleteFrom('submission_keys')
        .where('taken_at', '<', now.getTime() - KEEP_MS)
        .execute();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
    },
    async release(key) {
      await db.deleteFrom('submission_keys').where('key', '=', key).execute();
    },
  };
}
