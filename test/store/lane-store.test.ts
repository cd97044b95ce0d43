import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { approval, later, NO_CLAIM, T0 } from '../helpers/store-fixtures.ts';

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `lanes on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
      let store: ApprovalStores;

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
        store = createApprovalStores(testDb.handle.db, testDb.handle.dialect);
      });
      afterAll(() => testDb?.close());
      beforeEach(() => testDb.clear());

      /** The request announcements of two approvals in one channel: one lane, two heads in turn. */
      async function twoRequestsInOneChannel() {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.createApproval(approval('BBBBBBBBBBBb'), T0);
        const [first, second] = (await store.pendingAnnouncements(10)).filter(
          (a) => a.kind === 'request',
        );
        if (!first || !second) throw new Error('no requests');
        return [first, second] as const;
      }

      it('lets one attempt at a time serve a lane, fleet-wide, and paces the lane after a post', async () => {
        const [first, second] = await twoRequestsInOneChannel();
        const lane = 'post:C2147483705';
        const held = await store.claimAnnouncement(first, T0, 30_000, lane);
        expect(held).toMatchObject({ lane });
        // Another replica cannot take the lane's next announcement while the lane is held…
        expect(await store.claimAnnouncement(second, T0, 30_000, lane)).toBeUndefined();
        expect(
          (await store.deliverable(T0, { limit: 10, skipLanes: [] })).map((d) => d.lane),
        ).not.toContain(lane);
        // …nor right after its post, while the lane waits for Slack's pace.
        await store.markAnnouncementSent(
          held ?? NO_CLAIM,
          { channel: 'C1', ts: '1.1' },
          T0,
          60_000,
        );
        expect(await store.claimAnnouncement(second, T0, 30_000, lane)).toBeUndefined();
        expect(
          (await store.deliverable(T0, { limit: 10, skipLanes: [] })).map((d) => d.lane),
        ).not.toContain(lane);
        expect(
          (await store.deliverable(T0, { limit: 10, skipLanes: [], includeHeldLanes: true })).map(
            (d) => d.lane,
          ),
        ).toContain(lane);
        // Once the pace allows (on the database's clock), the next one goes.
        await testDb.handle.db.updateTable('lane_leases').set({ next_post_at: 0 }).execute();
        expect(await store.claimAnnouncement(second, T0, 30_000, lane)).toMatchObject({ lane });
      });

      it('lets a lane be claimed within the lookahead of its pace, saying how long to wait before posting', async () => {
        const [first, second] = await twoRequestsInOneChannel();
        const lane = 'post:C2147483705';
        const held = await store.claimAnnouncement(first, T0, 30_000, lane, 2000);
        // A lane nobody paced yet is free at once.
        expect(held).toMatchObject({ lane, laneWaitMs: 0 });
        await store.markAnnouncementSent(held ?? NO_CLAIM, { channel: 'C1', ts: '1.1' }, T0, 1500);
        const lanes = async (lookahead: number) =>
          (
            await store.deliverable(T0, { limit: 10, skipLanes: [], laneLookaheadMs: lookahead })
          ).map((d) => d.lane);
        // The pace ends in about 1.5 s: outside a 1 s lookahead, inside a 2 s one.
        expect(await lanes(1000)).not.toContain(lane);
        expect(await store.claimAnnouncement(second, T0, 30_000, lane, 1000)).toBeUndefined();
        expect(await lanes(2000)).toContain(lane);
        const early = await store.claimAnnouncement(second, T0, 30_000, lane, 2000);
        expect(early).toMatchObject({ lane });
        expect(early?.laneWaitMs).toBeGreaterThan(1000);
        expect(early?.laneWaitMs).toBeLessThanOrEqual(1500);
        // Claimed early, the lane is held like any other claim.
        expect(await lanes(60_000)).not.toContain(lane);
      });

      it('never moves a lane’s pace earlier when a claim made ahead of it is given back unused', async () => {
        const [first, second] = await twoRequestsInOneChannel();
        const lane = 'post:C2147483705';
        const held = await store.claimAnnouncement(first, T0, 30_000, lane, 2000);
        await store.markAnnouncementSent(held ?? NO_CLAIM, { channel: 'C1', ts: '1.1' }, T0, 1500);
        // A replica that read the first request before it was sent claims it ahead of the pace:
        // the lane is taken, the announcement is not, and the lane is given back.
        expect(await store.claimAnnouncement(first, T0, 30_000, lane, 2000)).toBeUndefined();
        // The lane still waits for its pace: nothing may be claimed without looking ahead.
        expect(await store.claimAnnouncement(second, T0, 30_000, lane, 0)).toBeUndefined();
        const early = await store.claimAnnouncement(second, T0, 30_000, lane, 2000);
        expect(early?.laneWaitMs).toBeGreaterThan(1000);
      });

      it('offers lanes free now before lanes that could only be claimed ahead of their pace', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.createApproval(
          approval('BBBBBBBBBBBb', { slack: { channelId: 'C2' } }),
          later(1),
        );
        await testDb.handle.db
          .insertInto('lane_leases')
          .values({
            lane: 'post:C2147483705',
            token: null,
            lease_until: null,
            next_post_at: Date.now() + 1500,
          })
          .execute();
        const heads = await store.deliverable(later(10), {
          limit: 10,
          skipLanes: [],
          laneLookaheadMs: 2000,
        });
        // The paced channel's request was recorded first, yet comes after the free lanes.
        expect(heads.at(-1)?.lane).toBe('post:C2147483705');
        expect(heads.map((d) => d.lane)).toContain('post:C2');
      });
    },
  );
}
