import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { ruleOf } from '../approvals/announcement-rules.ts';
import type { Decision } from '../approvals/approval-types.ts';
import { type LaneSubject, laneOf } from '../approvals/conversation.ts';
import { deliveryEvents } from '../approvals/lifecycle/deliveries.ts';
import type { Outbox } from '../approvals/outbox.ts';
import {
  type AnnouncementKind,
  announcementId,
  type TrackedApproval,
} from '../approvals/tracked-approval.ts';
import { applyEvent } from './apply-transition.ts';
import type { DialectName } from './database.ts';
import { dbNowMs, leaseIsFree, wholeMs } from './db-clock.ts';
import { claimLane, laneHeads, releaseLane } from './lane-store.ts';
import { toAnnouncement, toApproval } from './rows.ts';
import type { AnnouncementRow, Database } from './schema.ts';

type Db = Kysely<Database>;

const greatest = (dialect: DialectName) => sql.raw(dialect === 'postgres' ? 'greatest' : 'max');

/**
 * The outbox over Kysely: announcements waiting to be delivered, their fenced claims, and what
 * each delivery recorded. Lanes and their pace are lane-store.ts; the methods here own the
 * transactions.
 */
export function createOutbox(db: Db, dialect: DialectName): Outbox {
  return { ...outboxReads(db, dialect), ...deliveryAttempts(db, dialect) };
}

/**
 * A fenced claim of one announcement for one attempt (and of its lane, when it has one): the
 * attempt's token, and how long a post an earlier attempt may have made can still appear.
 */
function claimAnnouncement(db: Db, dialect: DialectName): Outbox['claimAnnouncement'] {
  return async ({ id, attempts }, now, leaseMs, lane, laneLookaheadMs = 0, commitHorizonMs = 0) => {
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
          // The previous attempt never recorded its outcome (its lease is still set): it may
          // have posted until its lease ended, and Slack may commit that post a horizon later.
          // (SET reads the row as it was.)
          commit_horizon_at: sql<number>`case when lease_until is null then commit_horizon_at
            else ${greatest(dialect)}(coalesce(commit_horizon_at, 0), lease_until + ${wholeMs(commitHorizonMs)}) end`,
        }))
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .where('attempts', '=', attempts)
        .where((eb) => leaseIsFree(eb, dialect))
        .returning(
          sql<number>`coalesce(commit_horizon_at, 0) - ${dbNowMs(dialect)}`.as('horizon_left_ms'),
        )
        .executeTakeFirst();
      if (result)
        return {
          id,
          token,
          commitHorizonLeftMs: Math.max(0, Number(result.horizon_left_ms)),
          ...(lane ? { lane, laneWaitMs } : {}),
        };
      if (lane) await releaseLane(trx, dialect, { token, lane }, 0);
      return undefined;
    });
  };
}

/** One attempt at an announcement: its claim, and what it recorded (fenced by the claim). */
function deliveryAttempts(
  db: Db,
  dialect: DialectName,
): Pick<
  Outbox,
  'claimAnnouncement' | 'markAnnouncementSent' | 'markAnnouncementRetry' | 'markAnnouncementFinal'
> {
  return {
    claimAnnouncement: claimAnnouncement(db, dialect),

    async markAnnouncementSent(claim, posted, now, laneWaitMs = 0) {
      return db.transaction().execute(async (trx) => {
        // What the delivery found may change the approval and record announcements (which
        // number themselves on its row): its row is taken first, as everywhere.
        await lockApprovalFirst(trx, dialect, claim.id);
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
          .returning(['djbh', 'kind', 'seq'])
          .executeTakeFirst();
        // What the delivery tells of the approval, applied as the domain's transitions say.
        if (row)
          for (const event of deliveryEvents(
            { kind: row.kind as AnnouncementKind, seq: row.seq },
            posted,
          ))
            await applyEvent(trx, dialect, row.djbh, event, { now });
        return row !== undefined;
      });
    },

    async markAnnouncementRetry(
      claim,
      { error, uncertain, nextAttemptAt, commitHorizonMs },
      laneWaitMs = 0,
    ) {
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
            ...(commitHorizonMs !== undefined
              ? {
                  commit_horizon_at: sql<number>`${dbNowMs(dialect)} + ${wholeMs(commitHorizonMs)}`,
                }
              : {}),
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
  };
}

/** What waits, what can go now, where a post went, and what failed (for an operator). */
function outboxReads(
  db: Db,
  dialect: DialectName,
): Pick<
  Outbox,
  | 'pendingAnnouncements'
  | 'deliverable'
  | 'sentPost'
  | 'failedAnnouncements'
  | 'redriveAnnouncements'
> {
  return {
    async pendingAnnouncements(limit) {
      const rows = await db
        .selectFrom('announcements')
        .selectAll()
        .where('state', '=', 'pending')
        .orderBy('created_at')
        .orderBy('djbh')
        .orderBy('seq')
        .limit(limit)
        .execute();
      return rows.map(toAnnouncement);
    },

    async deliverable(now, { limit, skipLanes, includeHeldLanes, laneLookaheadMs = 0 }) {
      await fillMissingLanes(db);
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

    sentPost: (id) => sentPost(db, id),

    async failedAnnouncements(limit) {
      const rows = await db
        .selectFrom('announcements')
        .selectAll()
        .where('state', '=', 'failed')
        .orderBy('created_at', 'desc')
        .orderBy('djbh')
        .orderBy('seq', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toAnnouncement);
    },

    async redriveAnnouncements(now, ids) {
      if (ids?.length === 0) return 0;
      let query = db
        .updateTable('announcements')
        // A fresh retry window from now (see the dispatcher); seq, its place in the recorded
        // order, stays: moving it could put it behind what waits for it.
        .set({
          state: 'pending',
          next_attempt_at: now.getTime(),
          redriven_at: now.getTime(),
          paused_ms: 0,
        })
        .where('state', '=', 'failed');
      if (ids) query = query.where('id', 'in', ids);
      return Number((await query.executeTakeFirst()).numUpdatedRows);
    },
  };
}

/**
 * The one lock order, on Postgres, for an approval and what is recorded about it: **the approval's
 * row first, then the lanes, then its announcements' rows.** Recording an announcement locks its
 * approval's row (the trigger numbering it updates the row), and a check's decision, handover,
 * reminder or escalation updates the row before its announcements; a handover then takes the
 * approver's pending announcements. A transaction that starts from an announcement (a delivery's
 * outcome) takes the approval's row here before anything else; otherwise a handover (row, then
 * announcement) and a delivery finding the approver unreachable (announcement, then row) wait for
 * each other and Postgres kills one (40P01). The retention purge keeps it too
 * (retention-store.ts). SQLite has one writer at a time and needs no order.
 */
export async function lockApprovalFirst(
  db: Db,
  dialect: DialectName,
  announcementId: string,
): Promise<void> {
  if (dialect !== 'postgres') return;
  await db
    .selectFrom('tracked_approvals')
    .select('djbh')
    .where(
      'djbh',
      '=',
      db.selectFrom('announcements').select('djbh').where('id', '=', announcementId),
    )
    // The lock an UPDATE of the row takes, no stronger: announcements recorded meanwhile only
    // need the key (their foreign key), which this leaves them.
    .forNoKeyUpdate()
    .execute();
}

export async function insertAnnouncement(
  db: Db,
  /**
   * The approval's number, or what decides its lanes (and its approver's term, for a kind about
   * them: tracked-approval.ts's announcementId) when the caller has it at hand.
   */
  of: string | (LaneSubject & { parties: { approver: { term?: number } } }),
  kind: AnnouncementKind,
  decision: Decision | null,
  now: Date,
  occurrence: number | null = null,
  /** Names the fact when neither a decision nor an occurrence does (why the request was edited). */
  detail?: string,
): Promise<void> {
  const djbh = typeof of === 'string' ? of : of.djbh;
  const approval = typeof of === 'string' ? await findApproval(db, of) : of;
  await insertAnnouncements(db, [
    announcementRow(djbh, approval, kind, decision, now, occurrence, detail),
  ]);
}

/**
 * Inserts announcements built by announcementRow in one statement, numbered (seq) in the order
 * given. The id names the fact: one recorded already is left as it is, never announced twice.
 */
export async function insertAnnouncements(db: Db, rows: readonly AnnouncementRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('announcements')
    .values([...rows])
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/**
 * A new announcement's row, waiting to be delivered. `approval` decides its lane (undefined for an
 * approval not found: it gets none).
 */
export function announcementRow(
  djbh: string,
  /** What decides its lane, and its approver's term for a kind about them (announcementId). */
  approval: (LaneSubject & { parties: { approver: { term?: number } } }) | undefined,
  kind: AnnouncementKind,
  decision: Decision | null,
  now: Date,
  occurrence: number | null = null,
  detail?: string,
): AnnouncementRow {
  return {
    id: announcementId(
      djbh,
      kind,
      decision ?? occurrence ?? detail,
      approval?.parties.approver.term,
    ),
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
    paused_ms: 0,
    commit_horizon_at: null,
    // Numbered by the database as it inserts the row (the order the approval's lanes deliver in).
    seq: null,
    // Resolved once, here, by the domain's rule; again only when the conversation changes.
    lane_key: approval ? laneOf(ruleOf(kind), approval) : null,
  };
}

/**
 * The approval's conversation changed (its request message was posted, maybe elsewhere than
 * asked): its pending announcements take the lanes of where they go now.
 */
export async function relane(db: Db, djbh: string): Promise<void> {
  const approval = await findApproval(db, djbh);
  if (!approval) return;
  const pending = await db
    .selectFrom('announcements')
    .select(['id', 'kind', 'lane_key'])
    .where('djbh', '=', djbh)
    .where('state', '=', 'pending')
    .execute();
  for (const row of pending) {
    const lane = laneOf(ruleOf(row.kind as AnnouncementKind), approval);
    if (lane !== row.lane_key)
      await db
        .updateTable('announcements')
        .set({ lane_key: lane })
        .where('id', '=', row.id)
        .execute();
  }
}

/**
 * Pending announcements an older release recorded without a lane (during a rolling deploy) get
 * theirs, so that every lane is the domain's, never rebuilt in SQL.
 */
async function fillMissingLanes(db: Db): Promise<void> {
  const rows = await db
    .selectFrom('announcements')
    .select(['id', 'kind', 'djbh'])
    .where('state', '=', 'pending')
    .where('lane_key', 'is', null)
    .limit(500)
    .execute();
  for (const row of rows) {
    const approval = await findApproval(db, row.djbh);
    if (!approval) continue;
    await db
      .updateTable('announcements')
      .set({ lane_key: laneOf(ruleOf(row.kind as AnnouncementKind), approval) })
      .where('id', '=', row.id)
      .where('lane_key', 'is', null)
      .execute();
  }
}

/** The approval as recorded now, or undefined. */
export async function findApproval(db: Db, djbh: string): Promise<TrackedApproval | undefined> {
  const row = await db
    .selectFrom('tracked_approvals')
    .selectAll()
    .where('djbh', '=', djbh)
    .executeTakeFirst();
  return row ? toApproval(row) : undefined;
}

/** Where the announcement `id` was posted, if it was sent and Slack gave it a place. */
export async function sentPost(
  db: Db,
  id: string,
): Promise<{ channel: string; ts: string } | undefined> {
  const row = await db
    .selectFrom('announcements')
    .select(['sent_channel', 'sent_ts'])
    .where('id', '=', id)
    .where('state', '=', 'sent')
    .executeTakeFirst();
  return row?.sent_channel && row.sent_ts
    ? { channel: row.sent_channel, ts: row.sent_ts }
    : undefined;
}
