import type { Expression, ExpressionBuilder, Kysely, SqlBool, Updateable } from 'kysely';
import { ANNOUNCEMENT_KINDS, ruleOf } from '../approvals/announcement-rules.ts';
import type { LifecycleEvent } from '../approvals/lifecycle/events.ts';
import {
  type ApprovalChange,
  type At,
  ENDED_TRACKING,
  FACTS_NEEDED,
  type Facts,
  type FenceItem,
  type LifecycleApproval,
  type Transition,
  transition,
} from '../approvals/lifecycle/transition.ts';
import {
  type AnnouncementKind,
  announcementId,
  type TrackedApproval,
} from '../approvals/tracked-approval.ts';
import { recordChainEffect, stepOfApproval } from './chain-store.ts';
import type { DialectName } from './database.ts';
import { wholeMs } from './db-clock.ts';
import { loginIs } from './login-match.ts';
import { announcementRow, insertAnnouncements, relane, sentPost } from './outbox-store.ts';
import { toApproval } from './rows.ts';
import type { Database, TrackedApprovalRow } from './schema.ts';

/*
 * The one way the store records what happens to an approval: the domain's transition
 * (approvals/lifecycle/) says what changes, under which fence, with which announcements; this
 * writes it and decides nothing. Callers hold the transaction.
 */

type Db = Kysely<Database>;
type Eb = ExpressionBuilder<Database, 'tracked_approvals'>;

/** The kinds about an approval's current approver (their rule's `ofApprover`). */
const OF_APPROVER_KINDS = ANNOUNCEMENT_KINDS.filter((kind) => ruleOf(kind).ofApprover);

/**
 * Applies `event` to the approval `djbh`: reads it (on Postgres locking its row first, the one
 * lock order: outbox-store.ts's lockApprovalFirst) and the facts its transition needs, asks the
 * domain for the transition, and writes it under its fence, then the events that follow for other
 * approvals. Answers the approval as changed, or undefined when the fence refused it (nothing
 * written) or there is no such approval.
 */
export async function applyEvent(
  db: Db,
  dialect: DialectName,
  djbh: string,
  event: LifecycleEvent,
  at: At,
  /** The approval as the caller read it, when that is enough for the transition (a claimed row). */
  known?: LifecycleApproval,
): Promise<TrackedApproval | undefined> {
  const approval = known ?? (await readForChange(db, dialect, djbh));
  if (!approval) return undefined;
  const facts = await measure(db, approval, event, at);
  return applyTransition(db, dialect, djbh, transition(approval, event, at, facts), at.now);
}

/** Writes a transition: the change under its fence, then its announcements and what follows. */
export async function applyTransition(
  db: Db,
  dialect: DialectName,
  djbh: string,
  t: Transition,
  now: Date,
): Promise<TrackedApproval | undefined> {
  const approval = await writeTransition(db, djbh, t, now);
  if (!approval) return undefined;
  for (const next of t.follows ?? []) await applyEvent(db, dialect, next.djbh, next.event, { now });
  return approval;
}

/** A transition without what follows for other approvals: its change, announcements and lanes. */
export async function writeTransition(
  db: Db,
  djbh: string,
  t: Omit<Transition, 'follows'>,
  now: Date,
): Promise<TrackedApproval | undefined> {
  // A removal is a sweep over every approval its fence holds for (store/retention-store.ts).
  if (t.removes) throw new Error(`a removal is applied by the retention store, not to ${djbh}`);
  const fenced = (eb: Eb) => eb.and(t.fence.map((item) => fenceHolds(eb, djbh, item)));
  // Nothing to change (a link for an approval that records it already): the fence alone.
  const row =
    Object.keys(t.change).length === 0
      ? await db
          .selectFrom('tracked_approvals')
          .selectAll()
          .where('djbh', '=', djbh)
          .where(fenced)
          .executeTakeFirst()
      : await db
          .updateTable('tracked_approvals')
          .set((eb) => columnsOf(t.change, eb))
          .where('djbh', '=', djbh)
          .where(fenced)
          .returningAll()
          .executeTakeFirst();
  if (!row) return undefined;
  const approval = toApproval(row);
  if (t.dropsEarlierApproversAnnouncements)
    await db
      .updateTable('announcements')
      .set({ state: 'skipped', last_error: 'handed to someone else before it went out' })
      .where('djbh', '=', djbh)
      .where('state', '=', 'pending')
      .where('kind', 'in', OF_APPROVER_KINDS)
      .execute();
  await recordAnnouncements(db, approval, t, now);
  if (t.relanes) await relane(db, djbh);
  // Under the same fence and transaction: a step decided and its next step due, or neither.
  if (t.chain) await recordChainEffect(db, t.chain, now);
  return approval;
}

/** The transition's announcements, each in the lane the domain's rule gives the changed approval. */
export function recordAnnouncements(
  db: Db,
  approval: Parameters<typeof announcementRow>[1] & { djbh: string },
  t: Pick<Transition, 'announcements'>,
  now: Date,
): Promise<void> {
  return insertAnnouncements(
    db,
    t.announcements.map((a) =>
      announcementRow(
        approval.djbh,
        approval,
        a.kind,
        a.decision ?? null,
        now,
        a.occurrence ?? null,
        a.detail,
      ),
    ),
  );
}

/** The approval as recorded now, its row locked on Postgres until the transaction ends. */
async function readForChange(
  db: Db,
  dialect: DialectName,
  djbh: string,
): Promise<TrackedApproval | undefined> {
  const row = await db
    .selectFrom('tracked_approvals')
    .selectAll()
    .where('djbh', '=', djbh)
    .$if(dialect === 'postgres', (q) => q.forNoKeyUpdate())
    .executeTakeFirst();
  return row ? toApproval(row) : undefined;
}

/** The facts the event's transition needs (FACTS_NEEDED), read in the same transaction. */
async function measure(
  db: Db,
  approval: LifecycleApproval,
  event: LifecycleEvent,
  at: At,
): Promise<Facts> {
  const facts: Facts = {};
  for (const fact of FACTS_NEEDED[event.kind] ?? []) {
    if (fact === 'approverShown')
      facts.approverShown = Boolean(
        await sentPost(
          db,
          announcementId(approval.djbh, 'approver-dm', undefined, approval.parties.approver.term),
        ),
      );
    if (fact === 'step') {
      const step = await stepOfApproval(db, approval.djbh);
      if (step) facts.step = step;
    }
    if (fact === 'unansweredReminders' && event.kind === 'escalation-due')
      facts.unansweredReminders = await unansweredReminders(
        db,
        approval.djbh,
        at.now,
        event.answerWithinMs,
      );
  }
  return facts;
}

/** The change's fields written as they are (a moment as its milliseconds), and their columns. */
const PLAIN_COLUMNS = {
  decision: 'decision',
  decidedBy: 'decided_by',
  tracking: 'tracking',
  updatedAt: 'updated_at',
  lastCheckedAt: 'last_checked_at',
  nextCheckAt: 'next_check_at',
  approverSlackId: 'approver_slack_id',
  remindersSent: 'reminders_sent',
  lastRemindedAt: 'last_reminded_at',
  approverUnreachableSince: 'approver_unreachable_since',
  escalatedAt: 'escalated_at',
  requestedAgainAs: 'requested_again_as',
} as const satisfies Partial<Record<keyof ApprovalChange, keyof TrackedApprovalRow>>;

type Columns = Record<string, unknown>;

/** The change's columns. */
function columnsOf(c: ApprovalChange, eb: Eb): Updateable<TrackedApprovalRow> {
  const set: Columns = {};
  for (const [field, column] of Object.entries(PLAIN_COLUMNS)) {
    const value = c[field as keyof typeof PLAIN_COLUMNS];
    if (value !== undefined) set[column] = value instanceof Date ? value.getTime() : value;
  }
  if (c.endsClaim) set.lease_until = null;
  return {
    ...set,
    ...checkColumns(c, eb),
    ...approverColumns(c, eb),
    ...addressColumns(c),
  } as Updateable<TrackedApprovalRow>;
}

/** What a check counts: failures in a row, and since when the service has not known it. */
function checkColumns(c: ApprovalChange, eb: Eb): Columns {
  const set: Columns = {};
  if (c.checkFailures !== undefined)
    set.check_failures =
      c.checkFailures === 'one-more' ? eb('check_failures', '+', 1) : c.checkFailures;
  if (c.unknownSince === undefined) return set;
  set.unknown_since =
    c.unknownSince && 'keptOr' in c.unknownSince
      ? eb.fn.coalesce('unknown_since', eb.val(c.unknownSince.keptOr.getTime()))
      : (c.unknownSince?.getTime() ?? null);
  return set;
}

/** A new approver in their term, and whom it was escalated to. */
function approverColumns(c: ApprovalChange, eb: Eb): Columns {
  const set: Columns = {};
  if (c.approver) {
    // As the transition read them: its fence makes sure nobody changed them since.
    set.former_approvers = JSON.stringify(c.approver.formerApprovers);
    set.approver_login = c.approver.login;
    set.approver_slack_id = c.approver.chatId;
    set.approver_term = c.approver.term;
    // What is recorded from here on (announcements.seq) is the new approver's.
    set.approver_from_seq = eb.ref('announcements_recorded');
    set.approver_since = c.approver.since.getTime();
  }
  if (c.escalatedTo !== undefined) {
    set.escalated_to_login = c.escalatedTo?.login ?? null;
    set.escalated_to_slack_id = c.escalatedTo?.chatId ?? null;
  }
  return set;
}

/** Where the request message is, and the one that replaced it. */
function addressColumns(c: ApprovalChange): Columns {
  const set: Columns = {};
  if (c.requestMessage) {
    set.channel_id = c.requestMessage.channelId;
    set.message_ts = c.requestMessage.messageTs;
    set.thread_ts = c.requestMessage.threadTs;
  }
  if (c.requestedAgainMessage) {
    set.requested_again_channel = c.requestedAgainMessage.channelId;
    set.requested_again_ts = c.requestedAgainMessage.ts;
  }
  return set;
}

/**
 * One fence item as a condition on the approval's row: `djbh` names it, or is the row's own
 * column in a sweep over many (retention).
 */
export function fenceHolds(
  eb: Eb,
  djbh: string | Expression<string>,
  item: FenceItem,
): Expression<SqlBool> {
  switch (item.kind) {
    case 'claim-held':
      return eb('check_token', '=', item.claim);
    case 'open':
      return eb.and([eb('decision', '=', 'pending'), eb('tracking', '=', 'active')]);
    case 'approver-term':
      return eb('approver_term', '=', item.term);
    case 'handed-over':
      return eb('approver_term', '>', 0);
    case 'approver-before':
      return eb('approver_from_seq', '<', item.seq);
    case 'approver-account-unknown':
      return eb('approver_slack_id', 'is', null);
    case 'approver-reachable':
      return eb('approver_unreachable_since', 'is', null);
    case 'not-escalated':
      return eb('escalated_at', 'is', null);
    case 'unanswered-reminders':
      return eb(
        unansweredCount(
          eb as unknown as Pick<Db, 'selectFrom'>,
          djbh,
          item.now,
          item.answerWithinMs,
          eb.ref('tracked_approvals.approver_from_seq'),
        ),
        '>=',
        item.atLeast,
      );
    case 'approver-login':
      return loginIs('approver_login', item.login);
    case 'approver-account':
      return eb('approver_slack_id', '=', item.chatId);
    case 'not-requested-again':
      return eb('requested_again_as', 'is', null);
    case 'requested-again-as':
      return eb('requested_again_as', '=', item.djbh);
    case 'ended':
    case 'unchanged-since':
    case 'announcements-settled':
    case 'request-again-ended':
      return retentionFenceHolds(eb, djbh, item);
  }
}

/** The fence items of retention's sweep (lifecycle/transition.ts's retentionTransition). */
function retentionFenceHolds(
  eb: Eb,
  djbh: string | Expression<string>,
  item: Extract<
    FenceItem,
    { kind: 'ended' | 'unchanged-since' | 'announcements-settled' | 'request-again-ended' }
  >,
): Expression<SqlBool> {
  switch (item.kind) {
    case 'ended':
      return eb('tracking', 'in', [...ENDED_TRACKING]);
    case 'unchanged-since':
      return eb('updated_at', '<', item.before.getTime());
    case 'announcements-settled':
      return eb.not(
        eb.exists(
          eb
            .selectFrom('announcements')
            .select('announcements.id')
            .where('announcements.djbh', '=', djbh)
            .where('announcements.state', 'in', ['pending', 'failed']),
        ),
      );
    case 'request-again-ended':
      return eb.or([
        eb('requested_again_as', 'is', null),
        eb.not(
          eb.exists(
            eb
              .selectFrom('tracked_approvals as again')
              .select('again.djbh')
              .whereRef('again.djbh', '=', 'tracked_approvals.requested_again_as')
              .where('again.tracking', 'not in', [...ENDED_TRACKING]),
          ),
        ),
      ]);
  }
}

/**
 * Reminders posted to the current approver (recorded since they got it: `fromSeq`; not merely
 * recorded: one still queued, dropped, failed or posted to nobody was not left unanswered) by an
 * attempt that started `answerWithinMs` or more before `now`. The attempt's start, not the
 * reminder's recording: a reminder delivered hours late still gets its full time to be answered.
 */
function unansweredCount(
  source: Pick<Db, 'selectFrom'>,
  djbh: string | Expression<string>,
  now: Date,
  answerWithinMs: number,
  fromSeq: Expression<number>,
) {
  return source
    .selectFrom('announcements')
    .select((e) => e.fn.countAll<number>().as('n'))
    .where('announcements.djbh', '=', djbh)
    .where('announcements.seq', '>', fromSeq)
    .where('announcements.kind', '=', 'reminder' satisfies AnnouncementKind)
    .where('announcements.state', '=', 'sent')
    .where('announcements.sent_ts', 'is not', null)
    .where('announcements.sent_ts', '<>', '')
    .where('announcements.attempted_at', '<=', now.getTime() - wholeMs(answerWithinMs));
}

/** How many reminders the current approver left unanswered at `now` (see unansweredCount). */
export async function unansweredReminders(
  db: Db,
  djbh: string,
  now: Date,
  answerWithinMs: number,
): Promise<number> {
  const fromSeq = db
    .selectFrom('tracked_approvals')
    .select('approver_from_seq')
    .where('djbh', '=', djbh)
    .$asScalar();
  const row = await unansweredCount(db, djbh, now, answerWithinMs, fromSeq).executeTakeFirst();
  return Number(row?.n ?? 0);
}
