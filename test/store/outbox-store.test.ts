import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { insertAnnouncement } from '../../src/store/outbox-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { approval, later, NO_CLAIM, pendingOf, T0 } from '../helpers/store-fixtures.ts';

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `outbox on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
      let store: ApprovalStores;

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
        store = createApprovalStores(testDb.handle.db, testDb.handle.dialect);
      });
      afterAll(() => testDb?.close());
      beforeEach(() => testDb.clear());

      /** The pending announcement of this kind, as the dispatcher reads it before claiming. */
      const pending = (kind: string) => pendingOf(store, kind);

      it('ties the thread to the request message once it is sent', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const claim = await store.claimAnnouncement(await pending('request'), T0, 30_000);
        expect(claim).toBeDefined();
        expect(
          await store.markAnnouncementSent(
            claim ?? { id: '', token: '' },
            { channel: 'D0DM', ts: '1700000000.000100' },
            T0,
          ),
        ).toBe(true);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          slack: { channelId: 'D0DM', messageTs: '1700000000.000100' },
        });
        // …and queues the edit that links the approver's DM to the thread.
        expect((await store.pendingAnnouncements(10)).map((a) => a.id)).toEqual([
          'AAAAAAAAAAAa:approver-dm',
          'AAAAAAAAAAAa:approver-dm-update:thread',
        ]);
      });

      it('moves what waited for the thread into the thread’s lane once the request is posted, or into the requester’s DM when it was posted there', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.createApproval(approval('BBBBBBBBBBBb'), T0);
        for (const djbh of ['AAAAAAAAAAAa', 'BBBBBBBBBBBb'])
          await store.recordDecision(djbh, {
            decision: 'approved',
            decidedBy: null,
            ended: true,
            now: later(1),
            nextCheckAt: later(1),
          });
        const send = async (djbh: string, channel: string) => {
          const request = (await store.pendingAnnouncements(100)).find(
            (a) => a.id === `${djbh}:request`,
          );
          const claim = request && (await store.claimAnnouncement(request, T0, 30_000));
          await store.markAnnouncementSent(claim ?? NO_CLAIM, { channel, ts: '1700000001.1' }, T0);
        };
        await send('AAAAAAAAAAAa', 'C2147483705');
        await send('BBBBBBBBBBBb', 'D0DM');
        const lanes = Object.fromEntries(
          (
            await testDb.handle.db
              .selectFrom('announcements')
              .select(['id', 'lane_key'])
              .where('kind', 'in', ['decision', 'parent-update'])
              .execute()
          ).map((r) => [r.id, r.lane_key]),
        );
        expect(lanes).toEqual({
          'AAAAAAAAAAAa:decision:approved': 'post:C2147483705',
          'AAAAAAAAAAAa:parent-update:approved': 'edit:post:C2147483705',
          // Posted in the requester's DM: their DM is the thread's conversation, named by person.
          'BBBBBBBBBBBb:decision:approved': 'dm:login:li.wei@corp.example',
          'BBBBBBBBBBBb:parent-update:approved': 'edit:dm:login:li.wei@corp.example',
        });
      });

      it('gives announcements an older release recorded without a lane theirs before offering them', async () => {
        await store.createApproval(
          approval('AAAAAAAAAAAa', { parties: { approver: { slackId: null } } }),
          T0,
        );
        // As a replica of the previous release records them during a rolling deploy.
        await testDb.handle.db.updateTable('announcements').set({ lane_key: null }).execute();
        const lanes = (await store.deliverable(later(10), { limit: 10, skipLanes: [] }))
          .map((d) => `${d.lane} ${d.announcement.kind}`)
          .sort();
        expect(lanes).toEqual([
          'dm:login:maria.lopez@corp.example approver-dm',
          'post:C2147483705 request',
        ]);
      });

      it('keeps a commit horizon after a post of unknown outcome: from the answer, or from a dead attempt’s lease end', async () => {
        const HORIZON = 60_000;
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const first = await store.claimAnnouncement(
          await pending('request'),
          T0,
          30_000,
          undefined,
          0,
          HORIZON,
        );
        expect(first?.commitHorizonLeftMs).toBe(0);
        // The attempt's post timed out: Slack may commit it up to the horizon from now.
        await store.markAnnouncementRetry(first ?? NO_CLAIM, {
          error: 'timeout',
          uncertain: true,
          nextAttemptAt: T0,
          commitHorizonMs: HORIZON,
        });
        const second = await store.claimAnnouncement(
          await pending('request'),
          T0,
          30_000,
          undefined,
          0,
          HORIZON,
        );
        expect(second?.commitHorizonLeftMs).toBeGreaterThan(HORIZON - 5000);
        // The second attempt dies mid-post: its lease runs out (moved into the past here).
        await testDb.handle.db
          .updateTable('announcements')
          .set((eb) => ({ lease_until: eb('lease_until', '-', 30_000 + 1) }))
          .where('id', '=', 'AAAAAAAAAAAa:request')
          .execute();
        const third = await store.claimAnnouncement(
          await pending('request'),
          T0,
          30_000,
          undefined,
          0,
          HORIZON,
        );
        // The horizon now runs from that lease's end: it has barely begun.
        expect(third?.commitHorizonLeftMs).toBeGreaterThan(HORIZON - 5000);
        // A search that found nothing before the horizon keeps it where it was.
        await store.markAnnouncementRetry(third ?? NO_CLAIM, {
          error: 'timeout',
          uncertain: true,
          nextAttemptAt: T0,
        });
        await testDb.handle.db
          .updateTable('announcements')
          .set((eb) => ({ commit_horizon_at: eb('commit_horizon_at', '-', HORIZON) }))
          .execute();
        const fourth = await store.claimAnnouncement(
          await pending('request'),
          T0,
          30_000,
          undefined,
          0,
          HORIZON,
        );
        expect(fourth?.commitHorizonLeftMs).toBe(0);
      });

      it('marks a request again on the old approval once, and where the new one was posted', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.createApproval(
          approval('BBBBBBBBBBBb', { request: { againOf: { djbh: 'AAAAAAAAAAAa', link: null } } }),
          T0,
        );
        // A second form submitted from the same button: the first one stays.
        await store.createApproval(
          approval('CCCCCCCCCCCc', { request: { againOf: { djbh: 'AAAAAAAAAAAa', link: null } } }),
          T0,
        );
        expect((await store.getApproval('AAAAAAAAAAAa'))?.request.requestedAgainAs).toEqual({
          djbh: 'BBBBBBBBBBBb',
          message: null,
        });
        const updates = async () =>
          (await store.pendingAnnouncements(100))
            .filter((a) => a.djbh === 'AAAAAAAAAAAa' && a.kind === 'parent-update')
            .map((a) => a.id);
        expect(await updates()).toEqual(['AAAAAAAAAAAa:parent-update:again:BBBBBBBBBBBb']);
        const request = (await store.pendingAnnouncements(100)).find(
          (a) => a.id === 'BBBBBBBBBBBb:request',
        );
        const claim = request && (await store.claimAnnouncement(request, T0, 30_000));
        await store.markAnnouncementSent(
          claim ?? NO_CLAIM,
          { channel: 'C1', ts: '1700000002.1' },
          T0,
        );
        expect((await store.getApproval('AAAAAAAAAAAa'))?.request.requestedAgainAs).toEqual({
          djbh: 'BBBBBBBBBBBb',
          message: { channelId: 'C1', ts: '1700000002.1' },
        });
        expect(await updates()).toContain('AAAAAAAAAAAa:parent-update:again-posted:BBBBBBBBBBBb');
        expect((await store.getApproval('CCCCCCCCCCCc'))?.request.requestedAgainAs).toBeNull();
      });

      it('keeps the thread a request was to join, unless it went elsewhere', async () => {
        await store.createApproval(
          approval('AAAAAAAAAAAa', { slack: { threadTs: '1700000000.000001' } }),
          T0,
        );
        await store.createApproval(
          approval('BBBBBBBBBBBb', { slack: { threadTs: '1700000000.000002' } }),
          T0,
        );
        const send = async (djbh: string, channel: string) => {
          const request = (await store.pendingAnnouncements(10)).find(
            (a) => a.id === `${djbh}:request`,
          );
          const claim = request && (await store.claimAnnouncement(request, T0, 30_000));
          await store.markAnnouncementSent(claim ?? NO_CLAIM, { channel, ts: '1700000001.1' }, T0);
        };
        await send('AAAAAAAAAAAa', 'C2147483705');
        await send('BBBBBBBBBBBb', 'D0DM');
        expect((await store.getApproval('AAAAAAAAAAAa'))?.slack.threadTs).toBe('1700000000.000001');
        expect(await store.getApproval('BBBBBBBBBBBb')).toMatchObject({
          slack: { channelId: 'D0DM', threadTs: null },
        });
      });

      it('lets one attempt at a time claim an announcement, on the database clock, until its lease runs out', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const first = await store.claimAnnouncement(await pending('request'), later(10), 300);
        expect(first).toBeDefined();
        // Held: neither a second read nor a replica whose clock is 2 minutes ahead gets it.
        expect(await store.claimAnnouncement(await pending('request'), later(20), 300)).toBe(
          undefined,
        );
        expect(await store.claimAnnouncement(await pending('request'), later(120_000), 300)).toBe(
          undefined,
        );
        await new Promise((r) => setTimeout(r, 400));
        const second = await store.claimAnnouncement(await pending('request'), later(30), 300);
        expect(second).toBeDefined();
        // Fenced: the first attempt, overtaken, can no longer record anything.
        const posted = { channel: 'C1', ts: '1.000001' };
        expect(await store.markAnnouncementSent(first ?? NO_CLAIM, posted, later(40))).toBe(false);
        expect(
          await store.markAnnouncementRetry(first ?? NO_CLAIM, {
            error: 'late',
            uncertain: false,
            nextAttemptAt: later(50),
          }),
        ).toBe(false);
        expect(await store.markAnnouncementSent(second ?? NO_CLAIM, posted, later(40))).toBe(true);
        expect((await store.pendingAnnouncements(10)).map((a) => a.kind)).toEqual([
          'approver-dm',
          'approver-dm-update',
        ]);
      });

      it('keeps a retry for later, and marks an attempt that never finished as uncertain', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const claim = await store.claimAnnouncement(await pending('request'), later(10), 30_000);
        await store.markAnnouncementRetry(claim ?? NO_CLAIM, {
          error: 'ratelimited',
          uncertain: false,
          nextAttemptAt: later(5000),
        });
        expect(await pending('request')).toMatchObject({
          attempts: 1,
          attemptedAt: later(10),
          lastError: 'ratelimited',
          uncertain: false,
          nextAttemptAt: later(5000),
        });
        const lanes = async (at: Date) =>
          (await store.deliverable(at, { limit: 10, skipLanes: [] })).map(
            (d) => d.announcement.kind,
          );
        expect(await lanes(later(4999))).toEqual(['approver-dm']);
        expect((await lanes(later(5000))).sort()).toEqual(['approver-dm', 'request']);
        // An attempt that dies after its claim leaves the post's fate unknown.
        await store.claimAnnouncement(await pending('request'), later(5000), 300);
        expect((await pending('request')).uncertain).toBe(true);
      });

      it('selects thread replies only once their request message exists or has failed for good', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.recordDecision('AAAAAAAAAAAa', {
          decision: 'approved',
          decidedBy: null,
          ended: true,
          now: later(1),
          nextCheckAt: later(1),
        });
        const kinds = async () =>
          (await store.deliverable(later(10), { limit: 10, skipLanes: [] }))
            .map((d) => `${d.lane} ${d.announcement.kind}`)
            .sort();
        // The approver's DM never waits for the thread; its edit waits for the DM.
        expect(await kinds()).toEqual([
          'dm:login:maria.lopez@corp.example approver-dm',
          'post:C2147483705 request',
        ]);
        const claim = await store.claimAnnouncement(await pending('request'), later(10), 30_000);
        await store.markAnnouncementFinal(claim ?? NO_CLAIM, 'failed', 'invalid_blocks');
        // Without a thread, the decision goes to the requester's DM: that person's DM lane.
        expect(await kinds()).toEqual([
          'dm:login:li.wei@corp.example decision',
          'dm:login:maria.lopez@corp.example approver-dm',
          'edit:post:C2147483705 parent-update',
        ]);
      });

      it('offers one announcement per lane, oldest first, and none from the lanes it is told to skip', async () => {
        for (const [i, djbh] of ['AAAAAAAAAAAa', 'BBBBBBBBBBBb', 'CCCCCCCCCCCc'].entries())
          await store.createApproval(approval(djbh), later(i));
        const heads = await store.deliverable(later(10), { limit: 10, skipLanes: [] });
        expect(heads.map((d) => d.announcement.id).sort()).toEqual([
          'AAAAAAAAAAAa:approver-dm',
          'AAAAAAAAAAAa:request',
        ]);
        const others = await store.deliverable(later(10), {
          limit: 10,
          skipLanes: ['post:C2147483705'],
        });
        expect(others.map((d) => d.announcement.id)).toEqual(['AAAAAAAAAAAa:approver-dm']);
      });

      it.skipIf(database.name !== 'postgres')(
        'numbers an approval’s announcements in commit order: one recorded while another transaction has numbered one of the same approval waits for that one to commit, other approvals do not',
        async () => {
          await store.createApproval(approval('AAAAAAAAAAAa'), T0);
          await store.createApproval(approval('BBBBBBBBBBBb'), T0);
          let commit = () => {};
          const committing = new Promise<void>((resolve) => {
            commit = resolve;
          });
          let numbered = () => {};
          const firstNumbered = new Promise<void>((resolve) => {
            numbered = resolve;
          });
          const first = testDb.handle.db.transaction().execute(async (trx) => {
            await insertAnnouncement(trx, 'AAAAAAAAAAAa', 'decision', 'approved', later(10));
            numbered();
            await committing;
          });
          await firstNumbered;
          // Another approval's announcement is recorded meanwhile, without waiting.
          await testDb.handle.db
            .transaction()
            .execute((trx) =>
              insertAnnouncement(trx, 'BBBBBBBBBBBb', 'decision', 'approved', later(5)),
            );
          let secondDone = false;
          // Recorded with an earlier clock, and started before the first commits.
          const second = testDb.handle.db
            .transaction()
            .execute((trx) =>
              insertAnnouncement(trx, 'AAAAAAAAAAAa', 'reminder', null, later(5), 1),
            )
            .then(() => {
              secondDone = true;
            });
          await new Promise((resolve) => setTimeout(resolve, 300));
          expect(secondDone).toBe(false);
          commit();
          await Promise.all([first, second]);
          const seqs = await testDb.handle.db
            .selectFrom('announcements')
            .select(['id', 'seq'])
            .where('djbh', '=', 'AAAAAAAAAAAa')
            .orderBy('seq')
            .execute();
          expect(seqs.map((r) => r.id)).toEqual([
            'AAAAAAAAAAAa:request',
            'AAAAAAAAAAAa:approver-dm',
            'AAAAAAAAAAAa:decision:approved',
            'AAAAAAAAAAAa:reminder:1',
          ]);
        },
      );

      it('keeps a thread in recorded order: a later reply waits while an earlier one is retrying', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const request = await store.claimAnnouncement(await pending('request'), T0, 30_000);
        await store.markAnnouncementSent(request ?? NO_CLAIM, { channel: 'C1', ts: '1.1' }, T0);
        await store.recordReminder('AAAAAAAAAAAa', 1, later(1));
        const reminder = await store.claimAnnouncement(await pending('reminder'), later(2), 30_000);
        await store.markAnnouncementSent(
          reminder ?? NO_CLAIM,
          { channel: 'D1', ts: '1.2' },
          later(2),
        );
        const note = await store.claimAnnouncement(
          await pending('reminder-note'),
          later(2),
          30_000,
        );
        await store.markAnnouncementRetry(note ?? NO_CLAIM, {
          error: 'service_unavailable',
          uncertain: false,
          nextAttemptAt: later(60_000),
        });
        await store.recordDecision('AAAAAAAAAAAa', {
          decision: 'approved',
          decidedBy: null,
          ended: true,
          now: later(3),
          nextCheckAt: later(3),
        });
        const thread = async (at: Date) =>
          (await store.deliverable(at, { limit: 10, skipLanes: [] }))
            .filter((d) => d.lane === 'post:C1')
            .map((d) => d.announcement.kind);
        // The decision was recorded after the note: it does not overtake it.
        expect(await thread(later(10))).toEqual([]);
        expect(await thread(later(60_000))).toEqual(['reminder-note']);
      });

      it('keeps the first attempt through a re-drive, for the search for an earlier post', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const claim = await store.claimAnnouncement(await pending('request'), later(10), 30_000);
        await store.markAnnouncementFinal(claim ?? NO_CLAIM, 'failed', 'invalid_blocks');
        await store.redriveAnnouncements(later(3_600_000));
        const again = await store.claimAnnouncement(await pending('request'), later(3_600_001), 1);
        expect(again).toBeDefined();
        expect(await pending('request')).toMatchObject({
          firstAttemptedAt: later(10),
          attemptedAt: later(3_600_001),
          uncertain: true,
        });
      });

      it('lists failed announcements and re-drives them for an operator', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const claim = await store.claimAnnouncement(await pending('request'), later(10), 30_000);
        await store.markAnnouncementFinal(claim ?? NO_CLAIM, 'failed', 'invalid_blocks');
        expect((await store.failedAnnouncements(10)).map((a) => a.id)).toEqual([
          'AAAAAAAAAAAa:request',
        ]);
        expect(await store.redriveAnnouncements(later(100), ['AAAAAAAAAAAa:nope'])).toBe(0);
        expect(await store.redriveAnnouncements(later(100))).toBe(1);
        expect(await store.failedAnnouncements(10)).toEqual([]);
        expect(await pending('request')).toMatchObject({ nextAttemptAt: later(100) });
      });
    },
  );
}
