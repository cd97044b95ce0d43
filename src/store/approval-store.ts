import { randomUUID } from 'node:crypto';
import {
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type RawBuilder,
  type SqlBool,
  sql,
} from 'kysely';
import {
  ANNOUNCEMENT_KINDS,
  kindsInLane,
  type LaneType,
  ruleOf,
} from '../approvals/announcement-rules.ts';
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

/** The row of delivery_state that holds the fleet-wide pause. */
const PAUSE_ROW = 'slack';

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
      // One token per claim: what this pass records is fenced by it (see recordCheck).
      const token = randomUUID();
      const rows =
        dialect === 'postgres'
          ? await claimOnPostgres(db, now, limit, leaseMs, token)
          : await claimOnSqlite(db, now, limit, leaseMs, token);
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
          .executeTakeFirst();
        // Another pass holds the approval now: it records (and announces) what it finds.
        if (Number(result.numUpdatedRows) !== 1) return false;
        await insertAnnouncement(trx, djbh, 'decision', decision, now);
        await insertAnnouncement(trx, djbh, 'parent-update', decision, now);
        await insertAnnouncement(trx, djbh, 'approver-dm-update', decision, now);
        if (ended) await insertStepCompletion(trx, djbh, now);
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
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await insertAnnouncement(trx, djbh, reason, null, now);
        await insertAnnouncement(trx, djbh, 'parent-update', null, now, null, reason);
        await insertStepCompletion(trx, djbh, now);
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
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await insertAnnouncement(trx, djbh, 'gave-up', null, now);
        await insertAnnouncement(trx, djbh, 'parent-update', null, now, null, 'gave-up');
        await insertStepCompletion(trx, djbh, now);
        return true;
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

    async deliverable(now, { limit, skipLanes, includeHeldLanes, laneLookaheadMs = 0 }) {
      const heads = await laneHeads(db, dialect, now, limit, [...skipLanes], {
        includeHeldLanes,
        laneLookaheadMs,
      });
      if (heads.length === 0) return [];
      const approvals = await db
        .selectFrom('tracked_approvals')
        .selectAll()
        .where(
          'djbh',
          'in',
          heads.map((h) => h.djbh),
        )
        .execute();
      const byDjbh = new Map(approvals.map((r) => [r.djbh, toApproval(r)]));
      return heads.flatMap((head) => {
        const approval = byDjbh.get(head.djbh);
        return approval ? [{ announcement: toAnnouncement(head), approval, lane: head.lane }] : [];
      });
    },

    async claimAnnouncement({ id, attempts }, now, leaseMs, lane, laneLookaheadMs = 0) {
      const token = randomUUID();
      return db.transaction().execute(async (trx) => {
        const laneWaitMs = lane
          ? await claimLane(trx, dialect, lane, token, leaseMs, laneLookaheadMs)
          : 0;
        if (laneWaitMs === undefined) return undefined;
        const result = await trx
          .updateTable('announcements')
          .set((eb) => ({
            attempted_at: now.getTime(),
            first_attempted_at: eb.fn.coalesce('first_attempted_at', eb.val(now.getTime())),
            lease_until: sql<number>`${dbNowMs(dialect)} + ${leaseMs}`,
            attempt_token: token,
            attempts: eb('attempts', '+', 1),
            // Until the attempt says otherwise, a crash leaves its post's fate unknown.
            uncertain: 1,
          }))
          .where('id', '=', id)
          .where('state', '=', 'pending')
          .where('attempts', '=', attempts)
          .where((eb) => leaseIsFree(eb, dialect))
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 1)
          return { id, token, ...(lane ? { lane, laneWaitMs } : {}) };
        if (lane) await releaseLane(trx, dialect, { token, lane }, 0);
        return undefined;
      });
    },

    async markAnnouncementSent(claim, posted, now, laneWaitMs = 0) {
      return db.transaction().execute(async (trx) => {
        await releaseLane(trx, dialect, claim, laneWaitMs);
        const row = await trx
          .updateTable('announcements')
          .set({
            state: 'sent',
            sent_ts: posted.ts,
            sent_channel: posted.channel,
            lease_until: null,
            attempt_token: null,
            uncertain: 0,
            last_error: null,
          })
          .where('id', '=', claim.id)
          .where('attempt_token', '=', claim.token)
          .returning(['djbh', 'kind'])
          .executeTakeFirst();
        if (posted.approverUnreachable && row) {
          const marked = await trx
            .updateTable('tracked_approvals')
            .set({ approver_unreachable_since: now.getTime(), updated_at: now.getTime() })
            .where('djbh', '=', row.djbh)
            .where('approver_unreachable_since', 'is', null)
            .executeTakeFirst();
          // The first time only: the requester is told once.
          if (Number(marked.numUpdatedRows) === 1) {
            await insertAnnouncement(trx, row.djbh, 'approver-unreachable', null, now);
            // The request message offers Request again now (see request-again.ts).
            await insertAnnouncement(
              trx,
              row.djbh,
              'parent-update',
              null,
              now,
              null,
              'approver-unreachable',
            );
          }
        }
        if (row?.kind === 'request' && posted.ts) {
          await trx
            .updateTable('tracked_approvals')
            .set((eb) => ({
              // Posted somewhere else than asked (the DM): the thread it was to join is not there.
              // (SET reads the row as it was, so channel_id here is the channel asked for.)
              thread_ts: eb
                .case()
                .when('channel_id', '=', posted.channel)
                .then(eb.ref('thread_ts'))
                .else(null)
                .end(),
              channel_id: posted.channel,
              message_ts: posted.ts,
              updated_at: now.getTime(),
            }))
            .where('djbh', '=', row.djbh)
            .execute();
          // The approver's DM did not wait for the thread; now it can link to it.
          await insertAnnouncement(trx, row.djbh, 'approver-dm-update', null, now, null, 'thread');
        }
        return row !== undefined;
      });
    },

    async markAnnouncementRetry(claim, { error, uncertain, nextAttemptAt }, laneWaitMs = 0) {
      return db.transaction().execute(async (trx) => {
        await releaseLane(trx, dialect, claim, laneWaitMs);
        const result = await trx
          .updateTable('announcements')
          .set({
            last_error: error.slice(0, 500),
            lease_until: null,
            attempt_token: null,
            uncertain: uncertain ? 1 : 0,
            next_attempt_at: nextAttemptAt.getTime(),
          })
          .where('id', '=', claim.id)
          .where('attempt_token', '=', claim.token)
          .executeTakeFirst();
        return Number(result.numUpdatedRows) === 1;
      });
    },

    async markAnnouncementFinal(claim, state, reason) {
      return db.transaction().execute(async (trx) => {
        await releaseLane(trx, dialect, claim, 0);
        const result = await trx
          .updateTable('announcements')
          .set({ state, last_error: reason.slice(0, 500), lease_until: null, attempt_token: null })
          .where('id', '=', claim.id)
          .where('attempt_token', '=', claim.token)
          .executeTakeFirst();
        return Number(result.numUpdatedRows) === 1;
      });
    },

    async sentPost(id) {
      const row = await db
        .selectFrom('announcements')
        .select(['sent_channel', 'sent_ts'])
        .where('id', '=', id)
        .where('state', '=', 'sent')
        .executeTakeFirst();
      return row?.sent_channel && row.sent_ts
        ? { channel: row.sent_channel, ts: row.sent_ts }
        : undefined;
    },

    async failedAnnouncements(limit) {
      const rows = await db
        .selectFrom('announcements')
        .selectAll()
        .where('state', '=', 'failed')
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toAnnouncement);
    },

    async redriveAnnouncements(now, ids) {
      if (ids?.length === 0) return 0;
      let query = db
        .updateTable('announcements')
        // A fresh retry window from now (see the dispatcher); created_at, its place in the
        // recorded order, stays: moving it could put it behind what waits for it.
        .set({ state: 'pending', next_attempt_at: now.getTime(), redriven_at: now.getTime() })
        .where('state', '=', 'failed');
      if (ids) query = query.where('id', 'in', ids);
      return Number((await query.executeTakeFirst()).numUpdatedRows);
    },

    async pauseDelivery(reason, now) {
      const result = await db
        .insertInto('delivery_state')
        .values({ id: PAUSE_ROW, paused_at: now.getTime(), paused_reason: reason.slice(0, 500) })
        .onConflict((oc) =>
          oc
            .column('id')
            .doUpdateSet({ paused_at: now.getTime(), paused_reason: reason.slice(0, 500) })
            .where('delivery_state.paused_at', 'is', null),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    async resumeDelivery() {
      const result = await db
        .updateTable('delivery_state')
        .set({ paused_at: null, paused_reason: null })
        .where('id', '=', PAUSE_ROW)
        .where('paused_at', 'is not', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async deliveryPause() {
      const row = await db
        .selectFrom('delivery_state')
        .selectAll()
        .where('id', '=', PAUSE_ROW)
        .where('paused_at', 'is not', null)
        .executeTakeFirst();
      return row?.paused_at != null
        ? { reason: row.paused_reason ?? '', since: new Date(Number(row.paused_at)) }
        : undefined;
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
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await insertAnnouncement(trx, djbh, 'reminder', null, now, occurrence);
        await insertAnnouncement(trx, djbh, 'reminder-note', null, now, occurrence);
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
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        if (to) {
          await insertAnnouncement(trx, djbh, 'escalation', null, now, unanswered);
          await insertAnnouncement(trx, djbh, 'escalation-note', null, now, unanswered);
        }
        return true;
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

/**
 * Reminders posted to the approver (not merely recorded: one still queued, dropped, failed or
 * posted to nobody was not left unanswered) by an attempt that started `answerWithinMs` or more
 * before `now`. The attempt's start, not the reminder's recording: a reminder delivered hours late
 * still gets its full time to be answered. Both on the app's clock, as everything escalation
 * measures (the poll pass's `now`).
 */
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
    .where('kind', '=', 'reminder' satisfies AnnouncementKind)
    .where('state', '=', 'sent')
    .where('sent_ts', 'is not', null)
    .where('sent_ts', '<>', '')
    .where('attempted_at', '<=', now.getTime() - wholeMs(answerWithinMs))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** A duration as the whole, non-negative milliseconds both dialects bind as an integer. */
function wholeMs(ms: number): number {
  return Math.max(0, Math.round(ms));
}

/**
 * The database's clock in epoch milliseconds. Leases are measured on it, never on a replica's own
 * clock: replicas whose clocks disagree by minutes still agree on who holds what.
 */
export function dbNowMs(dialect: DialectName) {
  return dialect === 'postgres'
    ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
    : sql<number>`cast(unixepoch('subsec') * 1000 as integer)`;
}

function leaseIsFree<T extends 'announcements' | 'tracked_approvals'>(
  eb: ExpressionBuilder<Database, T>,
  dialect: DialectName,
) {
  const lease = eb.ref('lease_until' as never) as unknown as Expression<number | null>;
  return eb.or([eb(lease, 'is', null), eb(lease, '<', dbNowMs(dialect))]);
}

/**
 * Takes `lane` for one attempt, fleet-wide: only while nobody holds it (or their lease ran out)
 * and its pacing allows a post within `lookaheadMs`. One statement, so two replicas cannot both
 * take it. Answers how long the taker must still wait for the pace (ms, on the database's clock),
 * or undefined when the lane was not taken.
 */
async function claimLane(
  db: Db,
  dialect: DialectName,
  lane: string,
  token: string,
  leaseMs: number,
  lookaheadMs: number,
): Promise<number | undefined> {
  const until = sql<number>`${dbNowMs(dialect)} + ${leaseMs}`;
  const taken = await db
    .insertInto('lane_leases')
    .values({ lane, token, lease_until: until, next_post_at: 0 })
    .onConflict((oc) =>
      oc
        .column('lane')
        .doUpdateSet({ token, lease_until: until })
        .where((eb) =>
          eb.and([
            eb.or([
              eb('lane_leases.lease_until', 'is', null),
              eb('lane_leases.lease_until', '<', dbNowMs(dialect)),
            ]),
            eb(
              'lane_leases.next_post_at',
              '<=',
              sql<number>`${dbNowMs(dialect)} + ${wholeMs(lookaheadMs)}`,
            ),
          ]),
        ),
    )
    .returning(sql<number>`next_post_at - ${dbNowMs(dialect)}`.as('wait_ms'))
    .executeTakeFirst();
  return taken ? Math.max(0, Number(taken.wait_ms)) : undefined;
}

/**
 * Gives the claim's lane back (if it still holds it) and paces it `waitMs` from now, never
 * earlier than its pace already was: a lane may be claimed ahead of its pace, and giving it back
 * unused must not let the next post go sooner.
 */
async function releaseLane(
  db: Db,
  dialect: DialectName,
  claim: { token: string; lane?: string },
  waitMs: number,
): Promise<void> {
  if (!claim.lane) return;
  await db
    .updateTable('lane_leases')
    .set({
      token: null,
      lease_until: null,
      next_post_at: sql<number>`${sql.raw(dialect === 'postgres' ? 'greatest' : 'max')}(next_post_at, ${dbNowMs(dialect)} + ${wholeMs(waitMs)})`,
    })
    .where('lane', '=', claim.lane)
    .where('token', '=', claim.token)
    .execute();
}

function dueApprovals(db: Db, dialect: DialectName, now: Date, limit: number) {
  return db
    .selectFrom('tracked_approvals')
    .select('djbh')
    .where('tracking', '=', 'active')
    .where('next_check_at', '<=', now.getTime())
    .where((eb) =>
      eb.or([eb('last_checked_at', 'is', null), eb('last_checked_at', '<', now.getTime())]),
    )
    .where((eb) => leaseIsFree(eb, dialect))
    .orderBy('next_check_at')
    .limit(limit);
}

/** Replicas sharing Postgres skip the rows another one is claiming at the same moment. */
function claimOnPostgres(db: Db, now: Date, limit: number, leaseMs: number, token: string) {
  return db.transaction().execute(async (trx) => {
    const due = (
      await dueApprovals(trx, 'postgres', now, limit).forUpdate().skipLocked().execute()
    ).map((r) => r.djbh);
    if (due.length === 0) return [];
    return trx
      .updateTable('tracked_approvals')
      .set({ lease_until: sql<number>`${dbNowMs('postgres')} + ${leaseMs}`, check_token: token })
      .where('djbh', 'in', due)
      .returningAll()
      .execute();
  });
}

/** SQLite has one writer at a time: a single statement claims atomically without holding a transaction. */
function claimOnSqlite(db: Db, now: Date, limit: number, leaseMs: number, token: string) {
  return db
    .updateTable('tracked_approvals')
    .set({ lease_until: sql<number>`${dbNowMs('sqlite')} + ${leaseMs}`, check_token: token })
    .where('djbh', 'in', dueApprovals(db, 'sqlite', now, limit))
    .returningAll()
    .execute();
}

type LaneHead = AnnouncementRow & { lane: string };

const LANE_TYPES: readonly LaneType[] = [
  'channel',
  'thread',
  'request-message',
  'approver-dm',
  'leader-dm',
  'own',
];

const kindsIn = (kinds: readonly string[]) => sql.join(kinds.length > 0 ? kinds : ['']);

/** The lane type of the announcement row `alias`, from the rules (a function of its kind). */
function laneTypeSql(alias: string) {
  const kind = sql.ref(`${alias}.kind`);
  return sql`case ${sql.join(
    LANE_TYPES.map((type) => sql`when ${kind} in (${kindsIn(kindsInLane(type))}) then ${type}`),
    sql` `,
  )} end`;
}

/**
 * The lane of announcement `a` of approval `t`, following its rule: one per channel, per thread's
 * fallback (the requester's DM while there is no thread), per request message, per approver.
 */
function laneSql() {
  const lane: Record<LaneType, RawBuilder<string>> = {
    channel: sql`'post:' || t.channel_id`,
    thread: sql`case when t.message_ts is null then 'requester:' || t.requester_slack_id else 'post:' || t.channel_id end`,
    'request-message': sql`'edit:' || t.channel_id`,
    'approver-dm': sql`'dm:' || t.approver_login`,
    // The same lane as that person's approver DMs: one conversation, one pace.
    'leader-dm': sql`'dm:' || coalesce(t.escalated_to_login, '')`,
    own: sql`'own:' || a.djbh`,
  };
  return sql`case ${sql.join(
    LANE_TYPES.map(
      (type) => sql`when a.kind in (${kindsIn(kindsInLane(type))}) then ${lane[type]}`,
    ),
    sql` `,
  )} end`;
}

/** What each rule waits for: no pending announcement of the kinds it names, for the same approval. */
function waitsSql() {
  const byWait = new Map<string, AnnouncementKind[]>();
  for (const kind of ANNOUNCEMENT_KINDS) {
    const key = [...ruleOf(kind).waitsFor].sort().join(',');
    byWait.set(key, [...(byWait.get(key) ?? []), kind]);
  }
  return sql.join(
    [...byWait].map(([key, kinds]) =>
      key === ''
        ? sql`a.kind in (${kindsIn(kinds)})`
        : sql`(a.kind in (${kindsIn(kinds)}) and not exists (
            select 1 from announcements w
            where w.djbh = a.djbh and w.state = 'pending' and w.kind in (${kindsIn(key.split(','))})))`,
    ),
    sql` or `,
  );
}

/** See ApprovalStore.deliverable: the head of each lane that has something deliverable now. */
async function laneHeads(
  db: Db,
  dialect: DialectName,
  now: Date,
  limit: number,
  skipLanes: string[],
  {
    includeHeldLanes = false,
    laneLookaheadMs = 0,
  }: { includeHeldLanes?: boolean; laneLookaheadMs?: number },
): Promise<LaneHead[]> {
  const skip = skipLanes.length > 0 ? sql`and lane not in (${sql.join(skipLanes)})` : sql``;
  // Another attempt (on any replica) serves the lane, or the lane must wait for Slack's pace
  // longer than the lookahead.
  const held = includeHeldLanes
    ? sql``
    : sql`and not exists (
        select 1 from lane_leases l
        where l.lane = heads.lane
          and ((l.lease_until is not null and l.lease_until >= ${dbNowMs(dialect)})
            or l.next_post_at > ${dbNowMs(dialect)} + ${wholeMs(laneLookaheadMs)}))`;
  const result = await sql<LaneHead>`
    select * from (
      select a.*, row_number() over (partition by lane order by a.next_attempt_at, a.created_at, a.id) as lane_rank
      from (
        select a.*, ${laneSql()} as lane
        from announcements a
        join tracked_approvals t on t.djbh = a.djbh
        where a.state = 'pending'
          and a.next_attempt_at <= ${now.getTime()}
          and (a.lease_until is null or a.lease_until < ${dbNowMs(dialect)})
          and (${waitsSql()})
          -- Within one approval, a lane delivers in the order its announcements were recorded.
          and not exists (
            select 1 from announcements e
            where e.djbh = a.djbh and e.state = 'pending' and e.id <> a.id
              and ${laneTypeSql('e')} = ${laneTypeSql('a')}
              and (e.created_at < a.created_at or (e.created_at = a.created_at and e.id < a.id)))
          -- While Slack refuses the app's token, no replica delivers anything.
          and not exists (select 1 from delivery_state p where p.paused_at is not null)
      ) a
    ) heads
    where lane_rank = 1 ${skip} ${held}
    -- Lanes free now before lanes claimable only ahead of their pace: an attempt that must wait
    -- for its lane holds a delivery slot meanwhile.
    order by (select count(*) from lane_leases l
              where l.lane = heads.lane and l.next_post_at > ${dbNowMs(dialect)}),
      next_attempt_at, created_at, id
    limit ${limit}
  `.execute(db);
  return result.rows.map((row) => {
    const { lane_rank: _rank, ...rest } = row as LaneHead & { lane_rank: unknown };
    return rest;
  });
}

export async function insertApproval(db: Db, a: NewTrackedApproval, now: Date): Promise<void> {
  await db
    .insertInto('tracked_approvals')
    .values({
      djbh: a.djbh,
      team_id: a.teamId,
      channel_id: a.channelId,
      message_ts: null,
      thread_ts: a.threadTs ?? null,
      function_execution_id: a.functionExecutionId ?? null,
      again_of: a.againOf ?? null,
      again_of_link: a.againOfLink ?? null,
      template_name: a.templateName ?? null,
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
    })
    .execute();
}

/** The approval has ended: the workflow step that started it (if one did) is owed its outcome. */
async function insertStepCompletion(db: Db, djbh: string, now: Date): Promise<void> {
  const row = await db
    .selectFrom('tracked_approvals')
    .select('function_execution_id')
    .where('djbh', '=', djbh)
    .executeTakeFirst();
  if (row?.function_execution_id) await insertAnnouncement(db, djbh, 'step-complete', null, now);
}

export async function insertAnnouncement(
  db: Db,
  djbh: string,
  kind: AnnouncementKind,
  decision: Decision | null,
  now: Date,
  occurrence: number | null = null,
  /** Names the fact when neither a decision nor an occurrence does (why the request was edited). */
  detail?: string,
): Promise<void> {
  await db
    .insertInto('announcements')
    .values({
      id: announcementId(djbh, kind, decision ?? occurrence ?? detail),
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
      next_attempt_at: now.getTime(),
      attempt_token: null,
      uncertain: 0,
      sent_channel: null,
      first_attempted_at: null,
      redriven_at: null,
    })
    // The id names the fact: recording it again must not announce it twice.
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/**
 * A Slack user just linked `login` (`/approve link`): pending approvals waiting for that login
 * that were marked unreachable while the app found nobody on Slack for it are reachable again, so
 * their reminders (and escalation) resume; the request message drops its Request again. Only those
 * that recorded no Slack account for the approver: one recorded (and found deactivated or gone) is
 * still who the app would message, link or not. The login is matched exactly, as the link is
 * looked up (AccountLinks.findByLogin): a mark cleared for a link that is never found would only
 * be set again. Run in the link's own transaction.
 */
export async function markApproverReachable(db: Db, login: string, now: Date): Promise<number> {
  const cleared = await db
    .updateTable('tracked_approvals')
    .set({ approver_unreachable_since: null, updated_at: now.getTime() })
    .where('approver_login', '=', login)
    .where('approver_slack_id', 'is', null)
    .where('approver_unreachable_since', 'is not', null)
    .where('decision', '=', 'pending')
    .where('tracking', '=', 'active')
    .returning('djbh')
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
    threadTs: row.thread_ts,
    functionExecutionId: row.function_execution_id,
    againOf: row.again_of,
    againOfLink: row.again_of_link,
    templateName: row.template_name,
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
    unknownSince: row.unknown_since === null ? null : new Date(Number(row.unknown_since)),
    checkClaim: row.check_token,
    approverUnreachableSince:
      row.approver_unreachable_since === null
        ? null
        : new Date(Number(row.approver_unreachable_since)),
    escalatedAt: row.escalated_at === null ? null : new Date(Number(row.escalated_at)),
    escalatedTo:
      row.escalated_to_login !== null && row.escalated_to_slack_id !== null
        ? { login: row.escalated_to_login, chatId: row.escalated_to_slack_id }
        : null,
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
    attemptedAt: row.attempted_at === null ? null : new Date(Number(row.attempted_at)),
    uncertain: Number(row.uncertain) === 1,
    nextAttemptAt: new Date(Number(row.next_attempt_at)),
    firstAttemptedAt:
      row.first_attempted_at === null ? null : new Date(Number(row.first_attempted_at)),
    redrivenAt: row.redriven_at === null ? null : new Date(Number(row.redriven_at)),
    sentChannel: row.sent_channel,
    sentTs: row.sent_ts,
    lastError: row.last_error,
    createdAt: new Date(Number(row.created_at)),
  };
}
