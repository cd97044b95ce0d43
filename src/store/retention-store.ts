import type { Kysely } from 'kysely';
import { ENDED_TRACKING, type RetentionStore } from '../approvals/retention.ts';
import { ENDED_WITHOUT_APPROVAL } from '../approvals/step-confirmation.ts';
import type { DialectName } from './database.ts';
import { createLeasedJobs } from './leased-jobs.ts';
import type { Database } from './schema.ts';

type Db = Kysely<Database>;

/** The RetentionStore over Kysely: the purge's deletes, on the once-per-period job claim (leased-jobs.ts). */
export function createRetentionStore(db: Db, dialect: DialectName): RetentionStore {
  return {
    ...createLeasedJobs(db, dialect),

    async deleteEndedApprovals(before, limit) {
      return db.transaction().execute(async (trx) => {
        const rows = await trx
          .selectFrom('tracked_approvals')
          .select('djbh')
          .where('tracking', 'in', [...ENDED_TRACKING])
          .where('updated_at', '<', before.getTime())
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('announcements')
                  .select('announcements.id')
                  .whereRef('announcements.djbh', '=', 'tracked_approvals.djbh')
                  // Pending: still to deliver; failed: an operator may still re-drive it.
                  .where('announcements.state', 'in', ['pending', 'failed']),
              ),
            ),
          )
          .limit(limit)
          .execute();
        const ids = rows.map((r) => r.djbh);
        if (ids.length === 0) return { approvals: 0, announcements: 0 };
        const announcements = await trx
          .deleteFrom('announcements')
          .where('djbh', 'in', ids)
          .executeTakeFirst();
        const approvals = await trx
          .deleteFrom('tracked_approvals')
          .where('djbh', 'in', ids)
          .executeTakeFirst();
        return {
          approvals: Number(approvals.numDeletedRows),
          announcements: Number(announcements.numDeletedRows),
        };
      });
    },

    async deleteSettledConfirmations(before) {
      const result = await db
        .deleteFrom('step_confirmations')
        .where('created_at', '<', before.getTime())
        .where((eb) =>
          eb.or([
            eb('state', '=', 'started'),
            eb.and([eb('state', 'in', [...ENDED_WITHOUT_APPROVAL]), eb('step_closed', '=', 1)]),
          ]),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async deleteSubmissionKeys(before) {
      const result = await db
        .deleteFrom('submission_keys')
        .where('taken_at', '<', before.getTime())
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
