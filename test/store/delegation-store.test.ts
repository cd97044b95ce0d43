import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Delegations } from '../../src/approvals/delegation.ts';
import { purgeExpired } from '../../src/approvals/retention.ts';
import { createDelegationStore } from '../../src/store/delegation-store.ts';
import { createRetentionStore } from '../../src/store/retention-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { T0 } from '../helpers/store-fixtures.ts';

const DAY = 24 * 3_600_000;
const at = (days: number) => new Date(T0.getTime() + days * DAY);

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `delegates while away, on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
      let store: Delegations;

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
        store = createDelegationStore(testDb.handle.db);
      });
      afterAll(() => testDb?.close());
      beforeEach(() => testDb.clear());

      it('keeps one delegation per person however their login is spelled, replaced by the next', async () => {
        await store.set({
          from: 'Maria@corp.example',
          to: 'alex@corp.example',
          until: at(10),
          setAt: T0,
        });
        await store.set({
          from: 'maria@corp.example',
          to: 'sam@corp.example',
          until: at(5),
          setAt: at(1),
        });
        expect(await store.list()).toEqual([
          { from: 'maria@corp.example', to: 'sam@corp.example', until: at(5), setAt: at(1) },
        ]);
        expect(await store.of('MARIA@corp.example')).toMatchObject({ to: 'sam@corp.example' });
        expect(await store.clear('MARIA@CORP.EXAMPLE')).toBe(true);
        expect(await store.clear('maria@corp.example')).toBe(false);
        expect(await store.of('maria@corp.example')).toBeUndefined();
      });

      it('gives only those in force, an ending one no longer at its end', async () => {
        await store.set({ from: 'a@x', to: 'b@x', until: at(1), setAt: T0 });
        await store.set({ from: 'c@x', to: 'd@x', until: at(3), setAt: T0 });
        expect((await store.inForceAt(T0)).map((d) => d.from)).toEqual(['a@x', 'c@x']);
        expect((await store.inForceAt(at(1))).map((d) => d.from)).toEqual(['c@x']);
        expect(await store.inForceAt(at(3))).toEqual([]);
      });

      it('is purged by the retention job 30 days after it ended, whatever the approvals’ retention', async () => {
        await store.set({ from: 'a@x', to: 'b@x', until: at(1), setAt: T0 });
        await store.set({ from: 'c@x', to: 'd@x', until: at(20), setAt: T0 });
        const counts = await purgeExpired(
          createRetentionStore(testDb.handle.db, testDb.handle.dialect),
          { retentionDays: 0 },
          at(40),
        );
        expect(counts?.delegations).toBe(1);
        expect((await store.list()).map((d) => d.from)).toEqual(['c@x']);
      });
    },
  );
}
