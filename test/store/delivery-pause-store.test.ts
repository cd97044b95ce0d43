import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { approval, later, T0 } from '../helpers/store-fixtures.ts';

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `delivery pause on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
      let store: ApprovalStores;

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
        store = createApprovalStores(testDb.handle.db, testDb.handle.dialect);
      });
      afterAll(() => testDb?.close());
      beforeEach(() => testDb.clear());

      it('pauses delivery fleet-wide once, offers nothing while paused, and resumes', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        expect(await store.deliveryPause()).toBeUndefined();
        expect(await store.pauseDelivery('Slack: token_revoked', later(1))).toBe(true);
        expect(await store.pauseDelivery('Slack: invalid_auth', later(2))).toBe(false);
        expect(await store.deliveryPause()).toEqual({
          reason: 'Slack: token_revoked',
          since: later(1),
        });
        expect(await store.deliverable(later(10), { limit: 10, skipLanes: [] })).toEqual([]);
        expect(await store.resumeDelivery(later(10))).toBe(true);
        expect(await store.resumeDelivery(later(10))).toBe(false);
        expect(await store.deliverable(later(10), { limit: 10, skipLanes: [] })).toHaveLength(2);
      });

      it('moves the retry window of what waits on by how long the pause lasted, on the database clock, once', async () => {
        const HOUR = 3_600_000;
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        expect(await store.pauseDelivery('Slack: token_revoked', later(HOUR))).toBe(true);
        // Thirty hours pass on the database's clock (the test cannot move it: the pause is moved back).
        await testDb.handle.db
          .updateTable('delivery_state')
          .set((eb) => ({ paused_at_db: eb('paused_at_db', '-', 30 * HOUR) }))
          .execute();
        // Recorded ten hours before the pause was lifted, during it.
        await store.createApproval(approval('BBBBBBBBBBBb'), later(21 * HOUR));
        expect(await store.resumeDelivery(later(31 * HOUR))).toBe(true);
        const paused = new Map(
          (await store.pendingAnnouncements(10)).map((a) => [a.id, Math.round(a.pausedMs / HOUR)]),
        );
        expect(paused.get('AAAAAAAAAAAa:request')).toBe(30);
        expect(paused.get('BBBBBBBBBBBb:request')).toBe(10);
        // A second replica lifting it too moves nothing again.
        expect(await store.resumeDelivery(later(31 * HOUR))).toBe(false);
        expect(
          (await store.pendingAnnouncements(10)).find((a) => a.id === 'AAAAAAAAAAAa:request')
            ?.pausedMs,
        ).toBeLessThan(31 * HOUR);
      });
    },
  );
}
