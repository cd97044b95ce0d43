import { type Kysely, type SqlBool, sql } from 'kysely';
import type { ApprovalRecord, ReportRange } from '../approvals/approval-report.ts';
import type { Decision } from '../approvals/approval-types.ts';
import type { Person } from '../approvals/person.ts';
import type { Tracking } from '../approvals/tracked-approval.ts';
import type { Database, TrackedApprovalRow } from './schema.ts';

/** Which approvals a report reads: started on or after `from`, before `to` (either open-ended). */
export type { ReportRange } from '../approvals/approval-report.ts';

/**
 * Approvals a page: a page is one short query, so a report of a year never holds more than a
 * page in memory nor a read open on the database for long (Postgres's streaming needs a cursor
 * package the app does not ship; SQLite would hold its read for the whole export).
 */
const PAGE = 1_000;

const COLUMNS = [
  'djbh',
  'requester_login',
  'requester_slack_id',
  'approver_login',
  'approver_term',
  'former_approvers',
  'channel_id',
  'template_id',
  'template_name',
  'created_at',
  'decision',
  'decided_by',
  'tracking',
  'reminders_sent',
  'escalated_to_login',
  'again_of',
  'requested_again_as',
  'title',
  'note',
] as const;

type ReportedRow = Pick<TrackedApprovalRow, (typeof COLUMNS)[number]> & {
  decision_seen_at: number | string | null;
  decision_told_at: number | string | null;
};

/**
 * Every approval retention has kept that started within `range`, in the order of their numbers
 * (the primary key: each page is found by the index, whatever the range), with when the app saw
 * each one's decision and posted it in the thread. Streamed: bounded memory for any number.
 */
export async function* streamApprovalRecords(
  db: Kysely<Database>,
  range: ReportRange,
  pageSize = PAGE,
): AsyncGenerator<ApprovalRecord> {
  let after: string | undefined;
  for (;;) {
    const rows: ReportedRow[] = await db
      .selectFrom('tracked_approvals as t')
      // The decision's announcement, found by its id (`<number>:decision:<decision>`, the primary
      // key: one lookup per approval, whatever the planner knows): recorded when the app saw the
      // decision, and its last attempt the one that posted it. A pending approval has none.
      .leftJoin('announcements as a', (join) =>
        join.on(sql<SqlBool>`a.id = t.djbh || ':decision:' || t.decision`),
      )
      .select(COLUMNS.map((c) => `t.${c}` as const))
      .select([
        'a.created_at as decision_seen_at',
        sql<number | null>`case when a.state = 'sent' then a.attempted_at end`.as(
          'decision_told_at',
        ),
      ])
      .$if(after !== undefined, (qb) => qb.where('t.djbh', '>', after ?? ''))
      .$if(range.from !== undefined, (qb) =>
        qb.where('t.created_at', '>=', range.from?.getTime() ?? 0),
      )
      .$if(range.to !== undefined, (qb) => qb.where('t.created_at', '<', range.to?.getTime() ?? 0))
      .$if(range.openOnly === true, (qb) => qb.where('t.tracking', '=', 'active'))
      .orderBy('t.djbh')
      .limit(pageSize)
      .execute();
    if (rows.length === 0) return;
    for (const row of rows) yield toRecord(row);
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]?.djbh;
  }
}

/** A timestamp column read back (Postgres's min() of a bigint is text), or null. */
const dateOf = (value: number | string | null): Date | null =>
  value === null ? null : new Date(Number(value));

function toRecord(row: ReportedRow): ApprovalRecord {
  const former = row.former_approvers ? (JSON.parse(row.former_approvers) as Person[]) : [];
  return {
    djbh: row.djbh,
    requesterLogin: row.requester_login,
    requesterSlackId: row.requester_slack_id,
    approverLogin: row.approver_login,
    approverTerm: Number(row.approver_term ?? 0),
    formerApprovers: former.map((p) => p.login).filter((l): l is string => Boolean(l)),
    channelId: row.channel_id,
    templateId: row.template_id,
    templateName: row.template_name,
    createdAt: new Date(Number(row.created_at)),
    decision: row.decision as Decision,
    decidedBy: row.decided_by,
    tracking: row.tracking as Tracking,
    decisionSeenAt: dateOf(row.decision_seen_at),
    decisionToldAt: dateOf(row.decision_told_at),
    remindersSent: Number(row.reminders_sent),
    escalatedToLogin: row.escalated_to_login,
    againOf: row.again_of,
    requestedAgainAs: row.requested_again_as,
    title: row.title,
    note: row.note,
  };
}

/** When an announcement was recorded (a decision's: when the app saw the decision); undefined when unknown. */
export async function announcementRecordedAt(
  db: Kysely<Database>,
  id: string,
): Promise<Date | undefined> {
  const row = await db
    .selectFrom('announcements')
    .select('created_at')
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? new Date(Number(row.created_at)) : undefined;
}
