import { randomUUID } from 'node:crypto';
import {
  CompiledQuery,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SqlBool,
  sql,
} from 'kysely';
import type { ApprovalRepository, Page, UnchangedCheck } from '../approvals/approval-repository.ts';
import type { LifecycleEvent } from '../approvals/lifecycle/events.ts';
import { type At, type LifecycleApproval, transition } from '../approvals/lifecycle/transition.ts';
import type { NewTrackedApproval, TrackedApproval } from '../approvals/tracked-approval.ts';
import {
  applyEvent,
  applyTransition,
  unansweredReminders,
  writeTransition,
} from './apply-transition.ts';
import { insertChain } from './chain-store.ts';
import type { DialectName } from './database.ts';
import { dbNowMs, leaseIsFree } from './db-clock.ts';
import { loginIs } from './login-match.ts';
import { announcementRow, findApproval, insertAnnouncements } from './outbox-store.ts';
import { prepared } from './postgres-prepared.ts';
import { newApprovalRow, toApproval, toClaimedApproval } from './rows.ts';
import type { AnnouncementRow, Database, TrackedApprovalRow } from './schema.ts';

type Db = Kysely<Database>;

/**
 * The approvals' repository over Kysely: what is known of each approval and its checks. Recording
 * what happened applies the lifecycle's transition (apply-transition.ts): the change under its
 * fence and the announcements that tell it (outbox-store.ts), in one transaction. Repository
 * functions below take the database or a transaction first; the methods here own the
 * transactions.
 */
export function createApprovalRepository(db: Db, dialect: DialectName): ApprovalRepository {
  return { ...eventRecords(db, dialect), ...checkClaims(db, dialect), ...approvalLists(db) };
}

type EventRecords = Pick<
  ApprovalRepository,
  | 'createApproval'
  | 'recordCheck'
  | 'recordDecision'
  | 'finish'
  | 'giveUp'
  | 'recordHandover'
  | 'recordReminder'
  | 'recordEscalation'
  | 'unansweredReminders'
>;

/**
 * The methods that record what happened to an approval: each one event of the lifecycle, applied
 * as the domain's transition says (apply-transition.ts).
 */
function eventRecords(db: Db, dialect: DialectName): EventRecords {
  /** What happened, applied as the domain's transition says, in one transaction. */
  const apply = (djbh: string, event: LifecycleEvent, at: At) =>
    db
      .transaction()
      .execute(async (trx) => (await applyEvent(trx, dialect, djbh, event, at)) !== undefined);
  return {
    async createApproval(approval, now, chain) {
      const { started, announcements } = startedWith(approval, now);
      // A statement commits on its own: on Postgres the approval and its announcements are one
      // round trip and the commit, where a transaction around them was five.
      if (dialect === 'postgres' && !started.follows?.length && !chain)
        return insertWithAnnouncements(db, dialect, approval, now, announcements);
      await db.transaction().execute(async (trx) => {
        await insertStarted(trx, dialect, approval, now);
        // The chain with it, or neither: a request of several steps never loses its later ones.
        if (chain) await insertChain(trx, approval, chain, now);
      });
    },

    async recordCheck(djbh, { now, nextCheckAt, failed, unknown }, claim) {
      const event = { kind: 'checked', nextCheckAt, failed, unknown } as const;
      // Nothing of the approval as it was matters to a check's end: no read before the write.
      const t = transition({ djbh } as LifecycleApproval, event, { now, claim });
      return (await applyTransition(db, dialect, djbh, t, now)) !== undefined;
    },

    recordDecision: (djbh, { decision, decidedBy, ended, now, nextCheckAt }, claim) =>
      apply(djbh, { kind: 'decided', decision, decidedBy, ended, nextCheckAt }, { now, claim }),

    finish: (djbh, reason, now, claim) => apply(djbh, { kind: 'closed', reason }, { now, claim }),

    giveUp: (djbh, now, claim) => apply(djbh, { kind: 'gave-up' }, { now, claim }),

    recordHandover: (djbh, { fromTerm, to, former, now, nextCheckAt }, claim) =>
      apply(
        djbh,
        { kind: 'handed-over', handover: { fromTerm, to, former }, nextCheckAt },
        { now, claim },
      ),

    recordReminder: (djbh, occurrence, now, claim) =>
      apply(djbh, { kind: 'reminder-due', occurrence }, { now, claim }),

    unansweredReminders: (djbh, { now, answerWithinMs }) =>
      unansweredReminders(db, djbh, now, answerWithinMs),

    recordEscalation: (djbh, { to, afterReminders, answerWithinMs, now }, claim) =>
      apply(djbh, { kind: 'escalation-due', to, afterReminders, answerWithinMs }, { now, claim }),
  };
}

/** Claims of due approvals for a poll pass, and what a sweep writes of those that found nothing. */
function checkClaims(
  db: Db,
  dialect: DialectName,
): Pick<
  ApprovalRepository,
  'getApproval' | 'markHot' | 'claimDue' | 'recordChecks' | 'releaseClaim'
> {
  return {
    getApproval: (djbh) => findApproval(db, djbh),

    async markHot(approverLogin, now, until, atMost) {
      const newest = db
        .selectFrom('tracked_approvals')
        .select('djbh')
        .where('tracking', '=', 'active')
        .where('decision', '=', 'pending')
        .where(loginIs('approver_login', approverLogin))
        // Locked newest first, in the order a link takes the same approver's rows
        // (waitingForLogin): taken by the update's own scan, the two deadlocked (40P01).
        .orderBy('created_at', 'desc')
        .orderBy('djbh', 'desc')
        .limit(atMost)
        .$if(dialect === 'postgres', (q) => q.forNoKeyUpdate());
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
      return rows
        .map(toClaimedApproval)
        .sort((a, b) => a.schedule.nextCheckAt.getTime() - b.schedule.nextCheckAt.getTime());
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
  };
}

/** The lists people read: what waits for them, what they requested. */
function approvalLists(
  db: Db,
): Pick<ApprovalRepository, 'waitingFor' | 'requestedBy' | 'openRequestsBy'> {
  return {
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
  const row = newApprovalRow(a, now);
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
  await db.insertInto('tracked_approvals').values(newApprovalRow(a, now)).execute();
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
  dialect: DialectName,
  login: string,
  now: Date,
  chatId?: string,
): Promise<number> {
  let cleared = 0;
  for (const approval of await waitingForLogin(db, dialect, login)) {
    const t = transition(approval, { kind: 'approver-linked', chatId }, { now });
    if ((await writeTransition(db, approval.djbh, t, now)) && t.announcements.length > 0) cleared++;
  }
  return cleared;
}

/**
 * A Slack user's link to `login` was removed: the approvals waiting for that login that record
 * their account stop recording it, for a previous release that still addresses by it during a
 * rolling deploy (this one finds the approver by login as each message goes, approvals/person.ts).
 */
export async function forgetApproverAccount(
  db: Db,
  dialect: DialectName,
  chatId: string,
  login: string,
): Promise<void> {
  const now = new Date();
  for (const approval of await waitingForLogin(db, dialect, login))
    if (approval.parties.approver.slackId === chatId)
      await writeTransition(
        db,
        approval.djbh,
        transition(approval, { kind: 'approver-unlinked', chatId }, { now }),
        now,
      );
}

/**
 * The approvals waiting for the approver with `login` (pending and followed), as a link's events
 * read them; each event's fence checks again as it is written. On Postgres their rows are locked
 * as they are read (the one lock order: the approval's row first, a newer one before an older):
 * the link's transitions decide on what they read (whether it is marked unreachable), and a mark
 * another replica set or cleared after an unlocked read would be missed or announced twice.
 */
async function waitingForLogin(
  db: Db,
  dialect: DialectName,
  login: string,
): Promise<TrackedApproval[]> {
  const rows = await db
    .selectFrom('tracked_approvals')
    .selectAll()
    .where(() => loginIs('approver_login', login))
    .where('decision', '=', 'pending')
    .where('tracking', '=', 'active')
    // Locked newest first: a Request again before the approval it was requested from, as the
    // events that follow from it take them (its start or its posting, then the old one's). In
    // the other order a link and the new request's delivery each held the row the other waited
    // for (40P01).
    .orderBy('created_at', 'desc')
    .orderBy('djbh', 'desc')
    .$if(dialect === 'postgres', (q) => q.forNoKeyUpdate())
    .execute();
  return rows.map(toApproval);
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

/** A new approval as its `started` transition reads it. */
/** The `started` transition of a new approval and its announcements' rows. */
function startedWith(approval: NewTrackedApproval, now: Date) {
  const started = transition(startedApproval(approval), { kind: 'started' }, { now });
  const lanes = {
    ...approval,
    slack: { ...approval.slack, messageTs: null },
    followUp: { escalatedTo: null },
  };
  const announcements = started.announcements.map((a) =>
    announcementRow(approval.djbh, lanes, a.kind, null, now, null, a.detail),
  );
  return { started, announcements };
}

/**
 * Records a new approval as its `started` event says (its row, its announcements, what follows
 * for others), in the caller's transaction.
 */
export async function insertStarted(
  trx: Db,
  dialect: DialectName,
  approval: NewTrackedApproval,
  now: Date,
): Promise<void> {
  const { started, announcements } = startedWith(approval, now);
  await insertWithAnnouncements(trx, dialect, approval, now, announcements);
  for (const next of started.follows ?? [])
    await applyEvent(trx, dialect, next.djbh, next.event, { now });
}

function startedApproval(a: NewTrackedApproval): LifecycleApproval {
  return {
    djbh: a.djbh,
    slack: {
      channelId: a.slack.channelId,
      threadTs: a.slack.threadTs ?? null,
      functionExecutionId: a.slack.functionExecutionId ?? null,
    },
    parties: { approver: { ...a.parties.approver, term: 0 }, formerApprovers: [] },
    request: a.request,
  };
}
