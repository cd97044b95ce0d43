import type { Kysely } from 'kysely';
import type { DeliveryPause } from '../approvals/delivery-pause.ts';
import type { Database } from './schema.ts';

/** The row of delivery_state that holds the fleet-wide pause. */
const PAUSE_ROW = 'slack';

/** The fleet-wide pause over Kysely: one row of delivery_state, read by every replica's outbox. */
export function createDeliveryPauseStore(db: Kysely<Database>): DeliveryPause {
  return {
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
  };
}
