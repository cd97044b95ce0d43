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
        const first = claims.find(Boolean);
        if (!first) throw new Error('no claim');
        // Held by a run: nobody else, until its lease runs out (the run died).
        const later = (ms: number) => new Date(NOW.getTime() + ms);
        expect(
          await store.claimJob('retention', later(60_000), RETENTION_LEASE_MS),
        ).toBeUndefined();
        await store.abandonJob(first);
        const short = await store.claimJob('retention', later(60_000), 200);
        expect(short).toBeDefined();
        expect(await store.claimJob('retention', later(60_000), 200)).toBeUndefined();
        await new Promise((r) => setTimeout(r, 300));
        const taken = await store.claimJob(
          'retention',
          later(RETENTION_LEASE_MS),
          RETENTION_LEASE_MS,
        );
        expect(taken).toBeDefined();
        if (!taken) throw new Error('not taken');
        // A run that failed lets go at once: the next tick tries again.
        await store.abandonJob(taken);
        const again = await store.claimJob(
          'retention',
          later(RETENTION_LEASE_MS + 1),
          RETENTION_LEASE_MS,
        );
        expect(again).toBeDefined();
        if (!again) throw new Error('not claimed again');
        // A run that went through: not again before the period is over.
        expect(await store.finishJob(again, NOW, DAY)).toBe(true);
        expect(
          await store.claimJob('retention', later(DAY - 1), RETENTION_LEASE_MS),
        ).toBeUndefined();
        const next = await store.claimJob('retention', later(DAY), RETENTION_LEASE_MS);
        expect(next).toBeDefined();
        if (!next) throw new Error('not claimed the next day');
        await store.finishJob(next, later(DAY), DAY);
        expect(
          await purgeExpired(
            createRetentionStore(database.handle.db, database.handle.dialect),
            { retentionDays: 400 },
            later(DAY + 60_000),
          ),
        ).toBeUndefined();
      });

      it('is fenced: a run whose lease ran out can neither let go of, extend nor finish the run that took over', async () => {
        const replicas = [1, 2, 3].map(() =>
          createLeasedJobs(database.handle.db, database.handle.dialect),
        );
        const [slow, next, third] = replicas;
        if (!slow || !next || !third) throw new Error('no replicas');
        const stale = await slow.claimJob('retention', NOW, 100);
        if (!stale) throw new Error('not claimed');
        await new Promise((r) => setTimeout(r, 200));
        // The slow run's lease ran out: another replica takes the job over.
        const current = await next.claimJob('retention', NOW, RETENTION_LEASE_MS);
        expect(current).toBeDefined();
        if (!current) throw new Error('not taken over');
        // The slow run stops (or fails): its release leaves the new run's lease alone …
        await slow.abandonJob(stale);
        expect(await third.claimJob('retention', NOW, RETENTION_LEASE_MS)).toBeUndefined();
        // … it cannot extend it or finish the day in its place …
        expect(await slow.holdJob(stale, RETENTION_LEASE_MS)).toBeUndefined();
        expect(await slow.finishJob(stale, NOW, DAY)).toBe(false);
        expect(await third.claimJob('retention', NOW, RETENTION_LEASE_MS)).toBeUndefined();
        // … while the run that holds it extends and finishes it.
        const held = await next.holdJob(current, RETENTION_LEASE_MS);
        expect(held).toBeDefined();
        if (!held) throw new Error('not held');
        expect(await next.finishJob(held, NOW, DAY)).toBe(true);
        expect(
          await third.claimJob('retention', new Date(NOW.getTime() + 60_000), RETENTION_LEASE_MS),
        ).toBeUndefined();
      });

      it('measures the lease on the database’s clock: a replica whose clock is an hour behind does not shorten it', async () => {
        const behind = createLeasedJobs(database.handle.db, database.handle.dialect);
        const onTime = createLeasedJobs(database.handle.db, database.handle.dialect);
        const now = Date.now();
        expect(
          await behind.claimJob('retention', new Date(now - 3_600_000), RETENTION_LEASE_MS),
        ).toBeDefined();
        // Its run holds the lease for 30 minutes of the database's time, whatever its clock says.
        expect(
          await onTime.claimJob('retention', new Date(now), RETENTION_LEASE_MS),
        ).toBeUndefined();
        expect(
          await onTime.claimJob('retention', new Date(now + 20 * 60_000), RETENTION_LEASE_MS),
        ).toBeUndefined();
      });
    },
  );
}
