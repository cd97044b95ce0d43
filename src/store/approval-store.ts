import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { ApprovalStore, Page } from '../approvals/approval-store.ts';
import type { Decision } from '../approvals/approval-types.ts';
import {
  type Announcement,
  type AnnouncementKind,
  announcementId,
  type NewTrackedApproval,
  type TrackedApproval,
  type Tracking,
} from '../approvals/tracked-approval.ts';
import type { DialectName } from './database.ts';
import type { AnnouncementRow, Database, TrackedApprovalRow } from './schema.ts';

type Db = Kysely<Database>;

/**
 * The ApprovalStore over Kysely. Repository functions below take the database or a transaction
 * first; the methods here own the transactions.
 */
export function createApprovalStore(db: Db, dialect: DialectName): ApprovalStore {
  return {
    async createApproval(approval, now) {
      await db.transaction().execute(async (trx) => {
        await insertApproval(trx, approval, now);
        await insertAnnouncement(trx, approval.djbh, 'request', null, now);
        await insertAnnouncement(trx, approval.djbh, 'approver-dm', null, now);
      });
    },

    getApproval: (djbh) => findApproval(db, djbh),

    async claimDue(now, limit, leaseMs) {
      const rows =
        dialect === 'postgres'
          ? await claimOnPostgres(db, now, limit, leaseMs)
          : await claimOnSqlite(db, now, limit, leaseMs);
      return rows.map(toApproval).sort((a, b) => a.nextCheckAt.getTime() - b.nextCheckAt.getTime());
    },

    async recordCheck(djbh, { now, nextCheckAt, failed }) {
      await db
        .updateTable('tracked_approvals')
        .set((eb) => ({
          last_checked_at: now.getTime(),
          next_check_at: nextCheckAt.getTime(),
          lease_until: null,
          check_failures: failed ? eb('check_failures', '+', 1) : 0,
        }))
        .where('djbh', '=', djbh)
        .execute();
    },

    async recordDecision(djbh, { decision, decidedBy, ended, now, nextCheckAt }) {
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('tracked_approvals')
          .set({
            decision,
            decided_by: decidedBy,
            tracking: ended ? 'finished' : 'active',
            updated_at: now.getTime(),
            last_checked_at: now.getTime(),
            next_check_at: nextCheckAt.getTime(),
            lease_until: null,
            check_failures: 0,
          })
          .where('djbh', '=', djbh)
          .execute();
        await insertAnnouncement(trx, djbh, 'decision', decision, now);
        await insertAnnouncement(trx, djbh, 'parent-update', decision, now);
      });
    },

    async giveUp(djbh, now) {
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('tracked_approvals')
          .set({ tracking: 'gave-up', updated_at: now.getTime(), lease_until: null })
          .where('djbh', '=', djbh)
          .execute();
        await insertAnnouncement(trx, djbh, 'gave-up', null, now);
      });
    },

    async pendingAnnouncements(limit) {
      const rows = await db
        .selectFrom('announcements')
        .selectAll()
        .where('state', '=', 'pending')
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toAnnouncement);
    },

    async claimAnnouncement(id, now, leaseMs) {
      const result = await db
        .updateTable('announcements')
        .set((eb) => ({
          attempted_at: now.getTime(),
          lease_until: now.getTime() + leaseMs,
          attempts: eb('attempts', '+', 1),
        }))
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .where((eb) =>
          eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now.getTime())]),
        )
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async markAnnouncementSent(id, posted, now) {
      await db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('announcements')
          .set({
            state: 'sent',
            sent_ts: posted.ts,
            lease_until: null,
            last_error: null,
          })
          .where('id', '=', id)
          .returning(['djbh', 'kind'])
          .executeTakeFirst();
        if (row?.kind === 'request') {
          await trx
            .updateTable('tracked_approvals')
            .set({ channel_id: posted.channel, message_ts: posted.ts, updated_at: now.getTime() })
            .where('djbh', '=', row.djbh)
            .execute();
        }
      });
    },

    async markAnnouncementFailed(id, error, final) {
      await db
        .updateTable('announcements')
        .set({
          last_error: error.slice(0, 500),
          lease_until: null,
          ...(final ? { state: 'failed' } : {}),
        })
        .where('id', '=', id)
        .execute();
    },

    async recordReminder(djbh, occurrence, now) {
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('tracked_approvals')
          .set({
            reminders_sent: occurrence,
            last_reminded_at: now.getTime(),
            updated_at: now.getTime(),
          })
          .where('djbh', '=', djbh)
          .execute();
        await insertAnnouncement(trx, djbh, 'reminder', null, now, occurrence);
        await insertAnnouncement(trx, djbh, 'reminder-note', null, now, occurrence);
      });
    },

    waitingFor: (login, limit) =>
      page(db, limit, (eb) =>
        eb.and([
          eb('approver_login', '=', login),
          eb('tracking', '=', 'active'),
          eb('decision', '=', 'pending'),
        ]),
      ),
    requestedBy: (login, limit) => page(db, limit, (eb) => eb('requester_login', '=', login)),
  };
}

function dueApprovals(db: Db, now: Date, limit: number) {
  return db
    .selectFrom('tracked_approvals')
    .select('djbh')
    .where('tracking', '=', 'active')
    .where('next_check_at', '<=', now.getTime())
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now.getTime())]))
    .orderBy('next_check_at')
    .limit(limit);
}

/** Replicas sharing Postgres skip the rows another one is claiming at the same moment. */
function claimOnPostgres(db: Db, now: Date, limit: number, leaseMs: number) {
  return db.transaction().execute(async (trx) => {
    const due = (await dueApprovals(trx, now, limit).forUpdate().skipLocked().execute()).map(
      (r) => r.djbh,
    );
    if (due.length === 0) return [];
    return trx
      .updateTable('tracked_approvals')
      .set({ lease_until: now.getTime() + leaseMs })
      .where('djbh', 'in', due)
      .returningAll()
      .execute();
  });
}

/** SQLite has one writer at a time: a single statement claims atomically without holding a transaction. */
function claimOnSqlite(db: Db, now: Date, limit: number, leaseMs: number) {
  return db
    .updateTable('tracked_approvals')
    .set({ lease_until: now.getTime() + leaseMs })
    .where('djbh', 'in', dueApprovals(db, now, limit))
    .returningAll()
    .execute();
}

export async function insertApproval(db: Db, a: NewTrackedApproval, now: Date): Promise<void> {
  await db
    .insertInto('tracked_approvals')
    .values({
      djbh: a.djbh,
      team_id: a.teamId,
      channel_id: a.channelId,
      message_ts: null,
      requester_slack_id: a.requesterSlackId,
      requester_login: a.requesterLogin,
      approver_login: a.approverLogin,
      approver_slack_id: a.approverSlackId,
      title: a.title,
      note: a.note,
      decision: 'pending',
      decided_by: null,
      tracking: 'active',
      locale: a.locale,
      created_at: a.createdAt.getTime(),
      updated_at: now.getTime(),
      last_checked_at: null,
      next_check_at: now.getTime(),
      check_failures: 0,
      lease_until: null,
      reminders_sent: 0,
      last_reminded_at: null,
    })
    .execute();
}

export async function insertAnnouncement(
  db: Db,
  djbh: string,
  kind: AnnouncementKind,
  decision: Decision | null,
  now: Date,
  occurrence: number | null = null,
): Promise<void> {
  await db
    .insertInto('announcements')
    .values({
      id: announcementId(djbh, kind, decision ?? occurrence ?? undefined),
      djbh,
      kind,
      decision,
      state: 'pending',
      attempts: 0,
      attempted_at: null,
      lease_until: null,
      sent_ts: null,
      last_error: null,
      created_at: now.getTime(),
      occurrence,
    })
    // The id names the fact: recording it again must not announce it twice.
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export async function findApproval(db: Db, djbh: string): Promise<TrackedApproval | undefined> {
  const row = await db
    .selectFrom('tracked_approvals')
    .selectAll()
    .where('djbh', '=', djbh)
    .executeTakeFirst();
  return row ? toApproval(row) : undefined;
}

type ApprovalFilter = (eb: ExpressionBuilder<Database, 'tracked_approvals'>) => Expression<SqlBool>;

async function page(db: Db, limit: number, where: ApprovalFilter): Promise<Page> {
  const rows = await db
    .selectFrom('tracked_approvals')
    .selectAll()
    .where(where)
    .orderBy('created_at', 'desc')
    .orderBy('djbh')
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom('tracked_approvals')
    .where(where)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return { approvals: rows.map(toApproval), total: Number(count.n) };
}

export function toApproval(row: TrackedApprovalRow): TrackedApproval {
  return {
    djbh: row.djbh,
    teamId: row.team_id,
    channelId: row.channel_id,
    messageTs: row.message_ts,
    requesterSlackId: row.requester_slack_id,
    requesterLogin: row.requester_login,
    approverLogin: row.approver_login,
    approverSlackId: row.approver_slack_id,
    title: row.title,
    note: row.note,
    decision: row.decision as Decision,
    decidedBy: row.decided_by,
    tracking: row.tracking as Tracking,
    locale: row.locale,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    lastCheckedAt: row.last_checked_at === null ? null : new Date(row.last_checked_at),
    nextCheckAt: new Date(row.next_check_at),
    checkFailures: row.check_failures,
    remindersSent: row.reminders_sent,
    lastRemindedAt: row.last_reminded_at === null ? null : new Date(row.last_reminded_at),
  };
}

export function toAnnouncement(row: AnnouncementRow): Announcement {
  return {
    id: row.id,
    djbh: row.djbh,
    kind: row.kind as AnnouncementKind,
    decision: row.decision as Decision | null,
    occurrence: row.occurrence,
    state: row.state as Announcement['state'],
    attempts: row.attempts,
    attemptedAt: row.attempted_at === null ? null : new Date(row.attempted_at),
    sentTs: row.sent_ts,
    lastError: row.last_error,
    createdAt: new Date(row.created_at),
  };
}
