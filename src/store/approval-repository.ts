import { randomUUID } from 'node:crypto';
import {
  CompiledQuery,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SqlBool,
  sql,
  type UpdateQueryBuilder,
  type UpdateResult,
} from 'kysely';
import { ANNOUNCEMENT_KINDS, ruleOf } from '../approvals/announcement-rules.ts';
import type { ApprovalRepository, Page, UnchangedCheck } from '../approvals/approval-repository.ts';
import { type Person, sameLogin } from '../approvals/person.ts';
import {
  type AnnouncementKind,
  announcementId,
  type NewTrackedApproval,
  type TrackedApproval,
} from '../approvals/tracked-approval.ts';
import type { DialectName } from './database.ts';
import { dbNowMs, leaseIsFree, wholeMs } from './db-clock.ts';
import { loginIs } from './login-match.ts';
import {
  announcementRow,
  findApproval,
  insertAnnouncement,
  insertAnnouncements,
  sentPost,
} from './outbox-store.ts';
import { prepared } from './postgres-prepared.ts';
import { toApproval } from './rows.ts';
import type { AnnouncementRow, Database, TrackedApprovalRow } from './schema.ts';

type Db = Kysely<Database>;

/** The kinds about an approval's current approver (their rule's `ofApprover`). */
const OF_APPROVER_KINDS = ANNOUNCEMENT_KINDS.filter((kind) => ruleOf(kind).ofApprover);

/**
 * The approvals' repository over Kysely: what is known of each approval and its checks. Recording
 * a fact queues the announcements that tell it (outbox-store.ts) in the same transaction.
 * Repository functions below take the database or a transaction first; the methods here own the
 * transactions.
 */
export function createApprovalRepository(db: Db, dialect: DialectName): ApprovalRepository {
  return {
    async createApproval(approval, now) {
      const lanes = { ...approval, messageTs: null, escalatedTo: null };
      // Numbered in this order: the request, then the approver's DM.
      const announcements = (['request', 'approver-dm'] as const).map((kind) =>
        announcementRow(approval.djbh, lanes, kind, null, now),
      );
      // A statement commits on its own: on Postgres the approval and its announcements are one
      // round trip and the commit, where a transaction around them was five.
      if (dialect === 'postgres' && !approval.againOf)
        return insertWithAnnouncements(db, dialect, approval, now, announcements);
      await db.transaction().execute(async (trx) => {
        await insertWithAnnouncements(trx, dialect, approval, now, announcements);
        if (approval.againOf) {
          // Request again is used up: the old request message drops its button at once, and
          // links to the new one once that is posted (outbox-store.ts, markAnnouncementSent).
          const used = await trx
            .updateTable('tracked_approvals')
            .set({ requested_again_as: approval.djbh, updated_at: now.getTime() })
            .where('djbh', '=', approval.againOf)
            .where('requested_again_as', 'is', null)
            .returningAll()
            .executeTakeFirst();
          // The row just updated decides the lane: no second read of it.
          if (used)
            await insertAnnouncement(
              trx,
              toApproval(used),
              'parent-update',
              null,
              now,
              null,
              `again:${approval.djbh}`,
            );
        }
      });
    },

    getApproval: (djbh) => findApproval(db, djbh),

    async markHot(approverLogin, now, until, atMost) {
      const newest = db
        .selectFrom('tracked_approvals')
        .select('djbh')
        .where('tracking', '=', 'active')
        .where('decision', '=', 'pending')
        .where(loginIs('approver_login', approverLogin))
        .orderBy('created_at', 'desc')
        .limit(atMost);
      const at = now.getTime();
      const result = await db
        .updateTable('tracked_approvals')
        .set({
          hot_until: until.getTime(),
          // Due now, unless due already: the next hot pass checks it.
          next_check_at: sql<number>`case when next_check_at > ${at} then ${at} else next_check_at end`,
        })
        .where('djbh', 'in', newest)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async claimDue(now, limit, leaseMs, filter) {
      // One token per claim: what this pass records is fenced by it (see recordCheck).
      const token = randomUUID();
      const hotOnly = filter?.hotOnly === true;
      const rows = await claimRows(db, dialect, now, limit, leaseMs, token, hotOnly);
      return rows.map(toApproval).sort((a, b) => a.nextCheckAt.getTime() - b.nextCheckAt.getTime());
    },

    async recordCheck(djbh, { now, nextCheckAt, failed, unknown }, claim) {
      const result = await db
        .updateTable('tracked_approvals')
        .set((eb) => ({
          last_checked_at: now.getTime(),
          next_check_at: nextCheckAt.getTime(),
          lease_until: null,
          check_failures: failed ? eb('check_failures', '+', 1) : 0,
          // A failed check says nothing about whether the service knows the number.
          ...(failed
            ? {}
            : {
                unknown_since: unknown
                  ? eb.fn.coalesce('unknown_since', eb.val(now.getTime()))
                  : null,
              }),
        }))
        .where('djbh', '=', djbh)
        .$if(Boolean(claim), (qb) => qb.where('check_token', '=', claim ?? ''))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async recordChecks(checks, now) {
      if (checks.length === 0) return [];
      const result = await recordUnchanged(db, dialect, checks, now);
      return result.rows.map((row) => ({ djbh: row.djbh, claim: row.check_token }));
    },

    async releaseClaim(djbh, claim) {
      if (!claim) return;
      await db
        .updateTable('tracked_approvals')
        .set({ lease_until: null })
        .where('djbh', '=', djbh)
        .where('check_token', '=', claim)
        .execute();
    },

    async recordDecision(djbh, { decision, decidedBy, ended, now, nextCheckAt }, claim) {
      return db.transaction().execute(async (trx) => {
        const result = await trx
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
          .$if(Boolean(claim), (qb) => qb.where('check_token', '=', claim ?? ''))
          .returningAll()
          .executeTakeFirst();
        // Another pass holds the approval now: it records (and announces) what it finds.
        if (!result) return false;
        const approval = toApproval(result);
        await insertAnnouncement(trx, approval, 'decision', decision, now);
        await insertAnnouncement(trx, approval, 'parent-update', decision, now);
        await insertAnnouncement(trx, approval, 'approver-dm-update', decision, now);
        if (ended) await insertStepCompletion(trx, approval, now);
        return true;
      });
    },

    async finish(djbh, reason, now, claim) {
      return db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('tracked_approvals')
          .set({ tracking: 'finished', updated_at: now.getTime(), lease_until: null })
          .where('djbh', '=', djbh)
          .$if(Boolean(claim), (qb) => qb.where('check_token', '=', claim ?? ''))
          .returningAll()
          .executeTakeFirst();
        if (!result) return false;
        const approval = toApproval(result);
        await insertAnnouncement(trx, approval, reason, null, now);
        await insertAnnouncement(trx, approval, 'parent-update', null, now, null, reason);
        await insertStepCompletion(trx, approval, now);
        return true;
      });
    },

    async giveUp(djbh, now, claim) {
      return db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('tracked_approvals')
          .set({ tracking: 'gave-up', updated_at: now.getTime(), lease_until: null })
          .where('djbh', '=', djbh)
          .$if(Boolean(claim), (qb) => qb.where('check_token', '=', claim ?? ''))
          .returningAll()
          .executeTakeFirst();
        if (!result) return false;
        const approval = toApproval(result);
        await insertAnnouncement(trx, approval, 'gave-up', null, now);
        await insertAnnouncement(trx, approval, 'parent-update', null, now, null, 'gave-up');
        await insertStepCompletion(trx, approval, now);
        return true;
      });
    },

    async recordHandover(djbh, { fromTerm, to, former, now, nextCheckAt }, claim) {
      return db.transaction().execute(async (trx) => {
        const kept = await formerWhoWereShown(trx, djbh, fromTerm, former);
        const result = await trx
          .updateTable('tracked_approvals')
          .set((eb) => ({
            // As the check read them: the term below makes sure nobody changed them since.
            former_approvers: JSON.stringify(kept),
            approver_login: to.login,
            approver_slack_id: to.chatId,
            approver_term: fromTerm + 1,
            // What is recorded from here on (announcements.seq) is the new approver's.
            approver_from_seq: eb.ref('announcements_recorded'),
            approver_since: now.getTime(),
            // They were never reminded, may well be reachable, and left nothing unanswered. An
            // escalation already made stays: once per approval, and its leader was sent its title.
            reminders_sent: 0,
            last_reminded_at: null,
            approver_unreachable_since: null,
            updated_at: now.getTime(),
            last_checked_at: now.getTime(),
            next_check_at: nextCheckAt.getTime(),
            lease_until: null,
            check_failures: 0,
            unknown_since: null,
          }))
          .where('djbh', '=', djbh)
          // Once per handover: whoever records it first moves the term on, the rest no-op.
          .where('approver_term', '=', fromTerm)
          .where('decision', '=', 'pending')
          .where('tracking', '=', 'active')
          .$if(Boolean(claim), (qb) => qb.where('check_token', '=', claim ?? ''))
          .returningAll()
          .executeTakeFirst();
        if (!result) return false;
        const approval = toApproval(result);
        // What still waited to go out to the one before is theirs, not the new approver's.
        await trx
          .updateTable('announcements')
          .set({ state: 'skipped', last_error: 'handed to someone else before it went out' })
          .where('djbh', '=', djbh)
          .where('state', '=', 'pending')
          .where('kind', 'in', OF_APPROVER_KINDS)
          .execute();
        await insertAnnouncement(trx, approval, 'handed-over', null, now, approval.approverTerm);
        await insertAnnouncement(trx, approval, 'approver-dm', null, now);
        await insertAnnouncement(
          trx,
          approval,
          'parent-update',
          null,
          now,
          null,
          `handed-over:${approval.approverTerm}`,
        );
        return true;
      });
    },

    async recordReminder(djbh, occurrence, now, claim) {
      return db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('tracked_approvals')
          .set({
            reminders_sent: occurrence,
            last_reminded_at: now.getTime(),
            updated_at: now.getTime(),
          })
          .where('djbh', '=', djbh)
          .$if(Boolean(claim), (qb) => qb.where('check_token', '=', claim ?? ''))
          .returningAll()
          .executeTakeFirst();
        if (!result) return false;
        const approval = toApproval(result);
        await insertAnnouncement(trx, approval, 'reminder', null, now, occurrence);
        await insertAnnouncement(trx, approval, 'reminder-note', null, now, occurrence);
        return true;
      });
    },

    unansweredReminders: (djbh, { now, answerWithinMs }) =>
      unansweredReminders(db, djbh, now, answerWithinMs),

    async recordEscalation(djbh, { to, afterReminders, answerWithinMs, now }, claim) {
      return db.transaction().execute(async (trx) => {
        // Counted first, in the transaction, and then said in the messages: the count only grows
        // (a delivered reminder stays delivered), so the one read here is what the decision used.
        const unanswered = await unansweredReminders(trx, djbh, now, answerWithinMs);
        if (unanswered < afterReminders) return false;
        const result = await trx
          .updateTable('tracked_approvals')
          .set({
            escalated_at: now.getTime(),
            escalated_to_login: to?.login ?? null,
            escalated_to_slack_id: to?.chatId ?? null,
            updated_at: now.getTime(),
          })
          .where('djbh', '=', djbh)
          // Once: whoever records it first (another replica, a retried pass) wins, the rest no-op.
          .where('escalated_at', 'is', null)
          .where('decision', '=', 'pending')
          .where('tracking', '=', 'active')
          .where('approver_unreachable_since', 'is', null)
          .$if(Boolean(claim), (qb) => qb.where('check_token', '=', claim ?? ''))
          .returningAll()
          .executeTakeFirst();
        if (!result) return false;
        if (to) {
          const approval = toApproval(result);
          await insertAnnouncement(trx, approval, 'escalation', null, now, unanswered);
          await insertAnnouncement(trx, approval, 'escalation-note', null, now, unanswered);
        }
        return true;
      });
    },

    waitingFor: (login, limit) =>
      page(db, limit, (eb) =>
        eb.and([
          // The leader it was escalated to is asked to act on it too (WHO_MAY['see']).
          eb.or([loginIs('approver_login', login), loginIs('escalated_to_login', login)]),
          eb('tracking', '=', 'active'),
          eb('decision', '=', 'pending'),
        ]),
      ),
    requestedBy: (login, limit) => page(db, limit, () => loginIs('requester_login', login)),
    openRequestsBy: (login, limit) =>
      page(db, limit, (eb) =>
        eb.and([
          loginIs('requester_login', login),
          eb('tracking', '=', 'active'),
          eb('decision', '=', 'pending'),
        ]),
      ),
  };
}

/**
 * Reminders posted to the approver (not merely recorded: one still queued, dropped, failed or
 * posted to nobody was not left unanswered) by an attempt that started `answerWithinMs` or more
 * before `now`. The attempt's start, not the reminder's recording: a reminder delivered hours late
 * still gets its full time to be answered. Both on the app's clock, as everything escalation
 * measures (the poll pass's `now`).
 */
/**
 * Records checks that found nothing new in one statement: each row only while its claim holds
 * (no claim: unconditionally, as recordCheck). A sweep writes this for nearly every approval, and
 * one statement per batch instead of per approval is most of what a check cost in the database.
 */
function recordUnchanged(
  db: Db,
  dialect: DialectName,
  checks: readonly UnchangedCheck[],
  now: Date,
) {
  const at = now.getTime();
  // The checks as a table v(djbh, claim, next_at, unknown): Postgres takes them as four arrays
  // (one statement text whatever the batch's size); SQLite as rows of values.
  const v =
    dialect === 'postgres'
      ? sql`select * from unnest(${checks.map((c) => c.djbh)}::text[], ${checks.map((c) => c.claim)}::text[], ${checks.map((c) => c.nextCheckAt.getTime())}::bigint[], ${checks.map((c) => (c.unknown ? 1 : 0))}::int[])`
      : sql`values ${sql.join(checks.map((c) => sql`(${c.djbh}, ${c.claim}, ${c.nextCheckAt.getTime()}, ${c.unknown ? 1 : 0})`))}`;
  return sql<{ djbh: string; check_token: string | null }>`
    with v(djbh, claim, next_at, unknown) as (${v})
    update tracked_approvals set
      last_checked_at = ${at},
      next_check_at = v.next_at,
      lease_until = null,
      check_failures = 0,
      unknown_since = case when v.unknown = 1 then coalesce(unknown_since, ${at}) else null end
    from v
    where tracked_approvals.djbh = v.djbh
      and (v.claim is null or tracked_approvals.check_token = v.claim)
    returning tracked_approvals.djbh, tracked_approvals.check_token`.execute(db);
}

async function unansweredReminders(
  db: Db,
  djbh: string,
  now: Date,
  answerWithinMs: number,
): Promise<number> {
  const row = await db
    .selectFrom('announcements')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('djbh', '=', djbh)
    // The current approver's (handover.ts): those recorded since they got it.
    .where(({ eb, selectFrom }) =>
      eb(
        'seq',
        '>',
        selectFrom('tracked_approvals').select('approver_from_seq').where('djbh', '=', djbh),
      ),
    )
    .where('kind', '=', 'reminder' satisfies AnnouncementKind)
    .where('state', '=', 'sent')
    .where('sent_ts', 'is not', null)
    .where('sent_ts', '<>', '')
    .where('attempted_at', '<=', now.getTime() - wholeMs(answerWithinMs))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

function dueApprovals(db: Db, dialect: DialectName, now: Date, limit: number, hotOnly: boolean) {
  return db
    .selectFrom('tracked_approvals')
    .select('djbh')
    .where('tracking', '=', 'active')
    .where('next_check_at', '<=', now.getTime())
    .where((eb) =>
      eb.or([eb('last_checked_at', 'is', null), eb('last_checked_at', '<', now.getTime())]),
    )
    .where((eb) => leaseIsFree(eb, dialect))
    .$if(hotOnly, (q) => q.where('hot_until', '>', now.getTime()))
    .orderBy('next_check_at')
    .limit(limit);
}

/**
 * Claims up to `limit` due approvals in one statement, so a claim is one round trip. Replicas
 * sharing Postgres skip the rows another one is claiming at the same moment (the subquery locks
 * what it picks, no longer than the statement); SQLite has one writer at a time, so the single
 * statement claims atomically without holding a transaction.
 */
function claimRows(
  db: Db,
  dialect: DialectName,
  now: Date,
  limit: number,
  leaseMs: number,
  token: string,
  hotOnly: boolean,
) {
  const due = dueApprovals(db, dialect, now, limit, hotOnly);
  return db
    .updateTable('tracked_approvals')
    .set({ lease_until: sql<number>`${dbNowMs(dialect)} + ${leaseMs}`, check_token: token })
    .where('djbh', 'in', dialect === 'postgres' ? due.forUpdate().skipLocked() : due)
    .returningAll()
    .execute();
}

/**
 * Inserts a new approval with its first announcements. On Postgres in one statement (the
 * announcements read the approval's number from the insert, so the trigger numbering them finds
 * its row); on SQLite, which has no insert in a WITH, in two, so there the caller holds a
 * transaction.
 */
async function insertWithAnnouncements(
  db: Db,
  dialect: DialectName,
  a: NewTrackedApproval,
  now: Date,
  announcements: readonly AnnouncementRow[],
): Promise<void> {
  if (dialect === 'sqlite') {
    await insertApproval(db, a, now);
    return insertAnnouncements(db, announcements);
  }
  // Built by hand rather than by Kysely's builder, whose parsing of the rows' values cost more
  // than Postgres's running the statement (140 µs of a 1 ms budget); the rows are the typed ones
  // the builder would take. As the builder does: a column left undefined gets its default.
  if (announcements.length === 0) throw new Error('an approval starts with its announcements');
  const parameters: unknown[] = [];
  const valuesOf = <R>(row: R, columns: readonly (keyof R)[]) =>
    columns.map((c) => {
      if (row[c] === undefined) return 'default';
      parameters.push(row[c]);
      return `$${parameters.length}`;
    });
  const names = (list: readonly string[]) => list.map((c) => `"${c}"`).join(', ');
  const row = approvalRow(a, now);
  const columns = Object.keys(row) as (keyof TrackedApprovalRow)[];
  const announcementColumns = [
    ...new Set(announcements.flatMap((n) => Object.keys(n) as (keyof AnnouncementRow)[])),
  ].filter((c) => c !== 'djbh');
  const approvalValues = valuesOf(row, columns).join(', ');
  const tuples = announcements.map(
    (n) => `((select djbh from approval), ${valuesOf(n, announcementColumns).join(', ')})`,
  );
  const text =
    `with approval as (insert into tracked_approvals (${names(columns)}) values (${approvalValues}) returning djbh) ` +
    `insert into announcements ("djbh", ${names(announcementColumns)}) values ${tuples.join(', ')} on conflict ("id") do nothing`;
  // The same text for every approval: prepared once per connection, unless a transaction is open
  // around it (postgres-prepared.ts).
  await db.executeQuery(
    db.isTransaction ? CompiledQuery.raw(text, parameters) : prepared(text, parameters),
  );
}

export async function insertApproval(db: Db, a: NewTrackedApproval, now: Date): Promise<void> {
  await db.insertInto('tracked_approvals').values(approvalRow(a, now)).execute();
}

function approvalRow(a: NewTrackedApproval, now: Date): TrackedApprovalRow {
  return {
    djbh: a.djbh,
    team_id: a.teamId,
    channel_id: a.channelId,
    message_ts: null,
    thread_ts: a.threadTs ?? null,
    function_execution_id: a.functionExecutionId ?? null,
    again_of: a.againOf ?? null,
    again_of_link: a.againOfLink ?? null,
    template_name: a.templateName ?? null,
    template_id: a.templateId ?? null,
    requested_again_as: null,
    requested_again_channel: null,
    requested_again_ts: null,
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
    unknown_since: null,
    approver_unreachable_since: null,
    check_token: null,
    escalated_at: null,
    escalated_to_login: null,
    escalated_to_slack_id: null,
    // Numbered by the database as their announcements are recorded (see announcements.seq).
    announcements_recorded: 0,
    approver_term: 0,
    approver_from_seq: 0,
    approver_since: null,
    former_approvers: null,
    hot_until: null,
  };
}

/** The approval has ended: the workflow step that started it (if one did) is owed its outcome. */
async function insertStepCompletion(db: Db, approval: TrackedApproval, now: Date): Promise<void> {
  if (approval.functionExecutionId)
    await insertAnnouncement(db, approval, 'step-complete', null, now);
}

/**
 * A Slack user just linked `login` (`/approve link`, or an admin): pending approvals waiting for
 * that login that were marked unreachable are reachable again, whatever account they recorded as
 * they started: messages go to whoever the identities give for the login as they are sent
 * (approvals/person.ts), and that is now the linked account. Their reminders (and escalation)
 * resume; the request message drops its Request again. The account the approvals record for the
 * approver becomes the linked one, for a previous release that still addresses by it during a
 * rolling deploy (this one does not). The login is matched as the link is looked up
 * (AccountLinks.findByLogin, case-insensitively: person.ts): a mark cleared for a link that is
 * never found would only be set again. Run in the link's own transaction.
 */
export async function markApproverReachable(
  db: Db,
  login: string,
  now: Date,
  chatId?: string,
): Promise<number> {
  const waiting = (qb: ApprovalUpdate) =>
    qb
      .where(() => loginIs('approver_login', login))
      .where('decision', '=', 'pending')
      .where('tracking', '=', 'active');
  const cleared = await db
    .updateTable('tracked_approvals')
    .set({ approver_unreachable_since: null, updated_at: now.getTime() })
    .$call(waiting)
    .where('approver_unreachable_since', 'is not', null)
    .returning('djbh')
    .execute();
  if (chatId)
    await db
      .updateTable('tracked_approvals')
      .set({ approver_slack_id: chatId })
      .$call(waiting)
      .execute();
  // Named by when, so that a mark set again later and cleared again edits the message again.
  for (const { djbh } of cleared)
    await insertAnnouncement(
      db,
      djbh,
      'parent-update',
      null,
      now,
      null,
      `approver-linked-${now.getTime()}`,
    );
  return cleared.length;
}

/**
 * A Slack user's link to `login` was removed: the approvals waiting for that login that record
 * their account stop recording it, for a previous release that still addresses by it during a
 * rolling deploy (this one finds the approver by login as each message goes, approvals/person.ts).
 */
export async function forgetApproverAccount(db: Db, chatId: string, login: string): Promise<void> {
  await db
    .updateTable('tracked_approvals')
    .set({ approver_slack_id: null })
    .where('approver_slack_id', '=', chatId)
    .where(() => loginIs('approver_login', login))
    .where('decision', '=', 'pending')
    .where('tracking', '=', 'active')
    .execute();
}

type ApprovalUpdate = UpdateQueryBuilder<
  Database,
  'tracked_approvals',
  'tracked_approvals',
  UpdateResult
>;

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

/**
 * The former approvers a handover records: those the approval was shown to in their own DM, who
 * keep seeing it (WHO_MAY's `former-approver`). The approver it is taken from joins them only if
 * their DM went out in their term (or they were shown it in an earlier one): one handed on before
 * it went out, or never reachable on Slack, was shown nothing and gains nothing.
 */
async function formerWhoWereShown(
  db: Db,
  djbh: string,
  fromTerm: number,
  former: readonly Person[],
): Promise<readonly Person[]> {
  const current = await findApproval(db, djbh);
  if (current?.approverTerm !== fromTerm) return former;
  const outgoing = current.approverLogin;
  if (current.formerApprovers.some((p) => sameLogin(p.login, outgoing))) return former;
  const shown = await sentPost(db, announcementId(djbh, 'approver-dm', undefined, fromTerm));
  return shown ? former : former.filter((p) => !sameLogin(p.login, outgoing));
}
