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
        expect(await store.resumeDelivery()).toBe(true);
        expect(await store.resumeDelivery()).toBe(false);
        expect(await store.deliverable(later(10), { limit: 10, skipLanes: [] })).toHaveLength(2);
      });
    },
  );
}
