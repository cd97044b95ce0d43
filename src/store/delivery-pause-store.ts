import { type Kysely, sql } from 'kysely';
import type { DeliveryPause } from '../approvals/delivery-pause.ts';
import type { DialectName } from './database.ts';
import { dbNowMs, wholeMs } from './db-clock.ts';
import type { Database } from './schema.ts';

/** The row of delivery_state that holds the fleet-wide pause. */
const PAUSE_ROW = 'slack';

/** The fleet-wide pause over Kysely: one row of delivery_state, read by every replica's outbox. */
export function createDeliveryPauseStore(
  db: Kysely<Database>,
  dialect: DialectName,
): DeliveryPause {
  const least = sql.raw(dialect === 'postgres' ? 'least' : 'min');
  const greatest = sql.raw(dialect === 'postgres' ? 'greatest' : 'max');
  return {
    async pauseDelivery(reason, now) {
      const paused = {
        paused_at: now.getTime(),
        paused_reason: reason.slice(0, 500),
        paused_at_db: dbNowMs(dialect),
      };
      const result = await db
        .insertInto('delivery_state')
        .values({ id: PAUSE_ROW, ...paused })
        .onConflict((oc) =>
          oc.column('id').doUpdateSet(paused).where('delivery_state.paused_at', 'is', null),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    async resumeDelivery(now) {
      return db.transaction().execute(async (trx) => {
        // How long it lasted, on the database's clock (a pause from before that was recorded
        // there: from now on).
        const pause = await trx
          .selectFrom('delivery_state')
          .select(
            sql<number>`${dbNowMs(dialect)} - coalesce(paused_at_db, ${dbNowMs(dialect)})`.as(
              'lasted_ms',
            ),
          )
          .where('id', '=', PAUSE_ROW)
          .where('paused_at', 'is not', null)
          .executeTakeFirst();
        if (!pause) return false;
        const lifted = await trx
          .updateTable('delivery_state')
          .set({ paused_at: null, paused_reason: null, paused_at_db: null })
          .where('id', '=', PAUSE_ROW)
          .where('paused_at', 'is not', null)
          .executeTakeFirst();
        // Only the replica that lifted it moves the windows on, once.
        if (Number(lifted.numUpdatedRows) === 0) return false;
        const lastedMs = wholeMs(Number(pause.lasted_ms));
        // Each pending announcement's window stood still for the pause, or for its own life if it
        // was recorded during the pause (a re-drive's window starts at the re-drive).
        await trx
          .updateTable('announcements')
          .set({
            paused_ms: sql<number>`paused_ms + ${least}(${lastedMs}, ${greatest}(0, ${now.getTime()} - coalesce(redriven_at, created_at)))`,
          })
          .where('state', '=', 'pending')
          .execute();
        return true;
      });
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
  };
}
