import { type Kysely, sql } from 'kysely';
import { ANNOUNCEMENT_KINDS, ruleOf } from '../approvals/announcement-rules.ts';
import type { AnnouncementKind } from '../approvals/tracked-approval.ts';
import type { DialectName } from './database.ts';
import { dbNowMs, wholeMs } from './db-clock.ts';
import type { AnnouncementRow, Database } from './schema.ts';

/*
 * Lanes: where posts queue behind each other, one attempt at a time across the fleet, at Slack's
 * pace. A lane is a conversation (approvals/conversation.ts), resolved when the announcement is
 * recorded and kept in its `lane_key`; what each kind waits for is the domain's rules
 * (announcement-rules.ts), which the SQL here is built from: it knows no kind by name.
 */

type Db = Kysely<Database>;

/**
 * Takes `lane` for one attempt, fleet-wide: only while nobody holds it (or their lease ran out)
 * and its pacing allows a post within `lookaheadMs`. One statement, so two replicas cannot both
 * take it. Answers how long the taker must still wait for the pace (ms, on the database's clock),
 * or undefined when the lane was not taken.
 */
export async function claimLane(
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
export async function releaseLane(
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

export type LaneHead = AnnouncementRow & { lane: string };

const kindsIn = (kinds: readonly string[]) => sql.join(kinds.length > 0 ? kinds : ['']);

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

/** See Outbox.deliverable: the head of each lane that has something deliverable now. */
export async function laneHeads(
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
      select a.*, row_number() over (partition by lane order by a.next_attempt_at, a.created_at, a.djbh, a.seq) as lane_rank
      from (
        -- The lane was resolved when the announcement was recorded (approvals/conversation.ts).
        select a.*, a.lane_key as lane
        from announcements a
        where a.state = 'pending'
          and a.lane_key is not null
          and a.next_attempt_at <= ${now.getTime()}
          and (a.lease_until is null or a.lease_until < ${dbNowMs(dialect)})
          and (${waitsSql()})
          -- Within one approval, a lane delivers in the order the database recorded its
          -- announcements (seq), never the order of the clocks of whoever recorded them. Across
          -- approvals a lane only has to be fair: due first, then as recorded by the app.
          and not exists (
            select 1 from announcements e
            where e.djbh = a.djbh and e.state = 'pending' and e.id <> a.id
              and e.lane_key = a.lane_key
              and e.seq < a.seq)
          -- While Slack refuses the app's token, no replica delivers anything.
          and not exists (select 1 from delivery_state p where p.paused_at is not null)
      ) a
    ) heads
    where lane_rank = 1 ${skip} ${held}
    -- Lanes free now before lanes claimable only ahead of their pace: an attempt that must wait
    -- for its lane holds a delivery slot meanwhile.
    order by (select count(*) from lane_leases l
              where l.lane = heads.lane and l.next_post_at > ${dbNowMs(dialect)}),
      next_attempt_at, created_at, djbh, seq
    limit ${limit}
  `.execute(db);
  return result.rows.map((row) => {
    const { lane_rank: _rank, ...rest } = row as LaneHead & { lane_rank: unknown };
    return rest;
  });
}
