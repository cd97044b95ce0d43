import { type Kysely, sql } from 'kysely';
import { AGE_BANDS, type AgeBand } from '../approvals/approval-report.ts';
import type { MetricsSource } from '../metrics.ts';
import type { Database } from './schema.ts';

/** Counts for the metrics scrape: the outbox by state and kind, its oldest entry, checks due, the pause. */
export function createMetricsSource(db: Kysely<Database>): MetricsSource {
  return {
    async announcementCounts() {
      const rows = await db
        .selectFrom('announcements')
        .select(['state', 'kind', sql<number>`count(*)`.as('n')])
        .groupBy(['state', 'kind'])
        .execute();
      return rows.map((r) => ({ state: r.state, kind: r.kind, count: Number(r.n) }));
    },
    async dueCount(now) {
      const row = await db
        .selectFrom('tracked_approvals')
        .select(sql<number>`count(*)`.as('n'))
        .where('tracking', '=', 'active')
        .where('next_check_at', '<=', now.getTime())
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    async oldestPendingAnnouncement() {
      const row = await db
        .selectFrom('announcements')
        .select(sql<number | null>`min(created_at)`.as('t'))
        .where('state', '=', 'pending')
        .executeTakeFirst();
      return row?.t == null ? undefined : new Date(Number(row.t));
    },
    async oldestOverdueCheck(now) {
      const row = await db
        .selectFrom('tracked_approvals')
        .select(sql<number | null>`min(next_check_at)`.as('t'))
        .where('tracking', '=', 'active')
        .where('next_check_at', '<=', now.getTime())
        .executeTakeFirst();
      return row?.t == null ? undefined : new Date(Number(row.t));
    },
    async openApprovalsByAge(now) {
      // One count per band, in one statement (each band's lower edge is the previous one's end).
      const bands = AGE_BANDS.map((band, i) => {
        const newest = now.getTime() - (i === 0 ? 0 : (AGE_BANDS[i - 1]?.belowMs ?? 0));
        const oldest = Number.isFinite(band.belowMs) ? now.getTime() - band.belowMs : null;
        const within =
          oldest === null
            ? sql`created_at <= ${newest}`
            : sql`created_at <= ${newest} and created_at > ${oldest}`;
        return sql<number>`sum(case when ${within} then 1 else 0 end)`.as(`b${i}`);
      });
      const row = (await db
        .selectFrom('tracked_approvals')
        .select(bands)
        .where('tracking', '=', 'active')
        .where('decision', '=', 'pending')
        .executeTakeFirst()) as Record<string, unknown> | undefined;
      return Object.fromEntries(
        AGE_BANDS.map((band, i) => [band.band, Number(row?.[`b${i}`] ?? 0)]),
      ) as Record<AgeBand, number>;
    },
    async deliveryPaused() {
      const row = await db
        .selectFrom('delivery_state')
        .select('id')
        .where('paused_at', 'is not', null)
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}
