import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { purgeExpired, RETENTION_LEASE_MS } from '../../src/approvals/retention.ts';
import { createLeasedJobs } from '../../src/store/leased-jobs.ts';
import { createRetentionStore } from '../../src/store/retention-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';

const DAY = 24 * 3_600_000;
const NOW = new Date('2026-11-23T03:17:00Z');

for (const which of TEST_DATABASES) {
  describe.skipIf(which.skipReason)(
    `leased jobs on ${which.name}${which.skipReason ? ` (skipped: ${which.skipReason})` : ''}`,
    () => {
      let database: Awaited<ReturnType<typeof openTestDatabase>>;
      beforeAll(async () => {
        database = await openTestDatabase(which);
      });
      afterAll(() => database?.close());
      beforeEach(() => database.clear());

      it('runs once per day across replicas that race for it, and again at the next tick after a failed run', async () => {
        const stores = [1, 2, 3].map(() =>
          createLeasedJobs(database.handle.db, database.handle.dialect),
        );
        const claims = await Promise.all(
          stores.map((s) => s.claimJob('retention', NOW, RETENTION_LEASE_MS)),
        );
        expect(claims.filter(Boolean)).toHaveLength(1);
        const [store] = stores;
        if (!store) throw new Error('no store');
        // Held by a run: nobody else, until its lease runs out (the run died).
        const later = (ms: number) => new Date(NOW.getTime() + ms);
        expect(await store.claimJob('retention', later(60_000), RETENTION_LEASE_MS)).toBe(false);
        await store.abandonJob('retention');
        expect(await store.claimJob('retention', later(60_000), 200)).toBe(true);
        expect(await store.claimJob('retention', later(60_000), 200)).toBe(false);
        await new Promise((r) => setTimeout(r, 300));
        expect(
          await store.claimJob('retention', later(RETENTION_LEASE_MS), RETENTION_LEASE_MS),
        ).toBe(true);
        // A run that failed lets go at once: the next tick tries again.
        await store.abandonJob('retention');
        expect(
          await store.claimJob('retention', later(RETENTION_LEASE_MS + 1), RETENTION_LEASE_MS),
        ).toBe(true);
        // A run that went through: not again before the period is over.
        await store.finishJob('retention', NOW, DAY);
        expect(await store.claimJob('retention', later(DAY - 1), RETENTION_LEASE_MS)).toBe(false);
        expect(await store.claimJob('retention', later(DAY), RETENTION_LEASE_MS)).toBe(true);
        await store.finishJob('retention', later(DAY), DAY);
        expect(
          await purgeExpired(
            createRetentionStore(database.handle.db, database.handle.dialect),
            { retentionDays: 400 },
            later(DAY + 60_000),
          ),
        ).toBeUndefined();
      });

      it('measures the lease on the database’s clock: a replica whose clock is an hour behind does not shorten it', async () => {
        const behind = createLeasedJobs(database.handle.db, database.handle.dialect);
        const onTime = createLeasedJobs(database.handle.db, database.handle.dialect);
        const now = Date.now();
        expect(
          await behind.claimJob('retention', new Date(now - 3_600_000), RETENTION_LEASE_MS),
        ).toBe(true);
        // Its run holds the lease for 30 minutes of the database's time, whatever its clock says.
        expect(await onTime.claimJob('retention', new Date(now), RETENTION_LEASE_MS)).toBe(false);
        expect(
          await onTime.claimJob('retention', new Date(now + 20 * 60_000), RETENTION_LEASE_MS),
        ).toBe(false);
      });
    },
  );
}
