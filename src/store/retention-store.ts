import type { Kysely } from 'kysely';
import type { RetentionStore } from '../approvals/retention.ts';
import { ENDED_WITHOUT_APPROVAL } from '../approvals/step-confirmation.ts';
import type { Database } from './schema.ts';

type Db = Kysely<Database>;

/** The RetentionStore over Kysely: the purge's deletes and the once-per-period job claim. */
export function createRetentionStore(db: Db): RetentionStore {
  return {
    async claimJob(name, now, periodMs) {
      await db
        .insertInto('job_runs')
        .values({ name, next_run_at: 0 })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      // One conditional write: of replicas racing for the same period, exactly one moves it on.
      const result = await db
        .updateTable('job_runs')
        .set({ next_run_at: now.getTime() + periodMs })
        .where('name', '=', name)
        .where('next_run_at', '<=', now.getTime())
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async deleteEndedApprovals(before, limit) {
      return db.transaction().execute(async (trx) => {
        const rows = await trx
          .selectFrom('tracked_approvals')
          .select('djbh')
          .where('tracking', '!=', 'active')
          .where('updated_at', '<', before.getTime())
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('announcements')
                  .select('announcements.id')
                  .whereRef('announcements.djbh', '=', 'tracked_approvals.djbh')
                  .where('announcements.state', '=', 'pending'),
              ),
            ),
          )
          .orderBy('updated_at')
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
