import type { Kysely } from 'kysely';
import { retentionTransition } from '../approvals/lifecycle/transition.ts';
import type { RetentionStore } from '../approvals/retention.ts';
import { ENDED_WITHOUT_APPROVAL } from '../approvals/step-confirmation.ts';
import { stepSubmissionKey } from '../approvals/submission-guard.ts';
import { fenceHolds } from './apply-transition.ts';
import type { DialectName } from './database.ts';
import { dbNowMs } from './db-clock.ts';
import { createLeasedJobs } from './leased-jobs.ts';
import type { Database } from './schema.ts';

type Db = Kysely<Database>;

/** The RetentionStore over Kysely: the purge's deletes, on the once-per-period job claim (leased-jobs.ts). */
export function createRetentionStore(db: Db, dialect: DialectName): RetentionStore {
  return {
    ...createLeasedJobs(db, dialect),

    deleteEndedApprovals: (before, limit) => deleteEndedApprovals(db, dialect, before, limit),

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

    deleteOldTemplates: (before) => deleteOldTemplates(db, before),

    async deleteSubmissionKeys(before) {
      const result = await db
        .deleteFrom('submission_keys')
        .where('taken_at', '<', before.getTime())
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async deleteEndedDelegations(before) {
      const result = await db
        .deleteFrom('delegations')
        .where('until', '<', before.getTime())
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/**
 * The lifecycle's `retention-due` event applied to up to `limit` approvals (RetentionStore's
 * deleteEndedApprovals): the domain's rule says which go, this only executes it.
 */
async function deleteEndedApprovals(
  db: Db,
  dialect: DialectName,
  before: Date,
  limit: number,
): Promise<{ approvals: number; announcements: number }> {
  // The domain's rule says which go; this only executes it, a batch at a time.
  const rule = retentionTransition({ kind: 'retention-due', before });
  return db.transaction().execute(async (trx) => {
    // The fence is checked in the statement that takes the rows: on Postgres it locks them
    // (every change locks an approval's row first), on SQLite the transaction is the one
    // writer, so none of them changes before it is deleted.
    const rows = await trx
      .selectFrom('tracked_approvals')
      .select(['djbh', 'function_execution_id'])
      .where((eb) =>
        eb.and(rule.fence.map((item) => fenceHolds(eb, eb.ref('tracked_approvals.djbh'), item))),
      )
      .limit(limit)
      // The approvals' rows before their announcements', as everywhere (outbox-store.ts,
      // lockApprovalFirst); one someone is working on now waits for the next purge.
      .$if(dialect === 'postgres', (qb) => qb.forUpdate().skipLocked())
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
    // Nothing else may name the approval or its people once it is gone: the workflow step's
    // confirmation that started it and that step's replay key (both usually gone already,
    // by age), and the lanes its announcements took (own:<number>, dm:<person>).
    const executions = rows.flatMap((r) =>
      r.function_execution_id ? [r.function_execution_id] : [],
    );
    if (executions.length > 0) {
      await trx.deleteFrom('step_confirmations').where('execution_id', 'in', executions).execute();
      await trx
        .deleteFrom('submission_keys')
        .where(
          'key',
          'in',
          executions.map((id) => stepSubmissionKey(id)),
        )
        .execute();
    }
    await deleteChainsOf(trx, ids);
    await deleteIdleLanes(trx, dialect);
    return {
      approvals: Number(approvals.numDeletedRows),
      announcements: Number(announcements.numDeletedRows),
    };
  });
}

/** RetentionStore's deleteOldTemplates: removed templates with their changes, and live ones' older changes. */
async function deleteOldTemplates(
  db: Db,
  before: Date,
): Promise<{ templates: number; templateChanges: number }> {
  return db.transaction().execute(async (trx) => {
    const removed = await trx
      .selectFrom('request_templates')
      .select('id')
      .where('removed_at', 'is not', null)
      .where('removed_at', '<', before.getTime())
      .execute();
    const ids = removed.map((r) => r.id);
    let templateChanges = 0;
    if (ids.length > 0) {
      const changes = await trx
        .deleteFrom('template_changes')
        .where('template_id', 'in', ids)
        .executeTakeFirst();
      templateChanges += Number(changes.numDeletedRows);
      await trx.deleteFrom('request_templates').where('id', 'in', ids).execute();
    }
    // A live template's older changes; its last one stays (who made it what it is).
    const older = await trx
      .deleteFrom('template_changes')
      .where('changed_at', '<', before.getTime())
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('template_changes as later')
            .select('later.id')
            .whereRef('later.template_id', '=', 'template_changes.template_id')
            .where((eb) =>
              eb.or([
                eb('later.changed_at', '>', eb.ref('template_changes.changed_at')),
                eb.and([
                  eb('later.changed_at', '=', eb.ref('template_changes.changed_at')),
                  eb('later.id', '>', eb.ref('template_changes.id')),
                ]),
              ]),
            ),
        ),
      )
      .executeTakeFirst();
    templateChanges += Number(older.numDeletedRows);
    return { templates: ids.length, templateChanges };
  });
}

/**
 * The requests in several steps one of whose steps is purged (approvals/steps.ts): the chain
 * names each step's number and its people, so it goes with the first of them; a later step
 * still followed is then an approval of its own, whose decision starts nothing more.
 */
async function deleteChainsOf(db: Db, ids: readonly string[]): Promise<void> {
  const chains = await db
    .selectFrom('approval_chain_steps')
    .select('chain_id')
    .where((eb) => eb.or([eb('djbh', 'in', ids), eb('chain_id', 'in', ids)]))
    .execute();
  const chainIds = [...new Set(chains.map((c) => c.chain_id))];
  if (chainIds.length === 0) return;
  await db.deleteFrom('approval_chain_steps').where('chain_id', 'in', chainIds).execute();
  await db.deleteFrom('approval_chains').where('id', 'in', chainIds).execute();
}

/**
 * Lanes nobody holds and whose pace has passed: such a row says nothing a missing one would not
 * (the next claim creates it again), but it names a conversation, and so a person (`dm:<person>`)
 * or an approval (`own:<number>`). Checked and deleted in one statement, so a claim taking the
 * lane meanwhile keeps it.
 */
async function deleteIdleLanes(db: Db, dialect: DialectName): Promise<void> {
  await db
    .deleteFrom('lane_leases')
    .where((eb) =>
      eb.and([
        eb.or([eb('token', 'is', null), eb('lease_until', '<', dbNowMs(dialect))]),
        eb('next_post_at', '<=', dbNowMs(dialect)),
      ]),
    )
    .execute();
}
