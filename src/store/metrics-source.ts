import { type Kysely, sql } from 'kysely';
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
