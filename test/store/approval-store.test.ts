import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalStore } from '../../src/approvals/approval-store.ts';
import type { NewTrackedApproval } from '../../src/approvals/tracked-approval.ts';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { createApprovalStore } from '../../src/store/approval-store.ts';
import { openDatabase } from '../../src/store/database.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';

const T0 = new Date('2026-11-21T10:00:00Z');
const NO_CLAIM = { id: '', token: '' };
const later = (ms: number) => new Date(T0.getTime() + ms);

function approval(djbh: string, overrides: Partial<NewTrackedApproval> = {}): NewTrackedApproval {
  return {
    djbh,
    teamId: 'T0001',
    channelId: 'C2147483705',
    requesterSlackId: 'U2147483697',
    requesterLogin: 'li.wei@corp.example',
    approverLogin: 'maria.lopez@corp.example',
    approverSlackId: 'U0MARIA',
    title: '扩容 storage',
    note: 'For Q3',
    locale: 'zh-CN',
    createdAt: T0,
    ...overrides,
  };
}

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `approval store on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
      let store: ApprovalStore;

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
        store = createApprovalStore(testDb.handle.db, testDb.handle.dialect);
      });
      afterAll(() => testDb?.close());
      beforeEach(() => testDb.clear());

      /** The pending announcement of this kind, as the dispatcher reads it before claiming. */
      async function pending(kind: string) {
        const found = (await store.pendingAnnouncements(100)).find((a) => a.kind === kind);
        if (!found) throw new Error(`no pending ${kind}`);
        return found;
      }

      it('migrates an existing database again without error', async () => {
        const again = await openDatabase(testDb.url);
        const applied = await sql<{
          name: string;
        }>`select name from kysely_migration order by name`.execute(again.db);
        await again.close();
        expect(applied.rows.map((r) => r.name)).toEqual([
          '2026-11-21-001-tracked-approvals',
          '2026-11-22-002-links-and-reminders',
          '2026-11-22-003-delivery-under-faults',
          '2026-11-22-004-submission-keys',
          '2026-11-22-005-entry-points',
          '2026-11-23-006-step-confirmations',
          '2026-11-23-007-job-runs',
          '2026-11-23-008-confirmation-answered-at',
          '2026-11-23-009-request-again',
          '2026-11-23-010-fleet-delivery',
          '2026-11-25-011-escalation',
          '2026-11-25-012-templates',
        ]);
      });

      it('runs on a database a newer release migrated further (a rollback), and says so', async () => {
        // What release N+1 leaves behind: a migration this code does not know, and its table.
        await sql`insert into kysely_migration (name, timestamp) values ('2099-01-01-999-from-the-future', '2099-01-01T00:00:00.000Z')`.execute(
          testDb.handle.db,
        );
        await sql`create table future_only (id text)`.execute(testDb.handle.db);
        let stamp: string | undefined;
        try {
          const rolledBack = await openDatabase(testDb.url);
          try {
            expect(rolledBack.schemaAhead).toEqual(['2099-01-01-999-from-the-future']);
            const s = createApprovalStore(rolledBack.db, rolledBack.dialect);
            await s.createApproval(approval('ROLLBACKxxxx'), T0);
            expect(await s.getApproval('ROLLBACKxxxx')).toMatchObject({ decision: 'pending' });
          } finally {
            await rolledBack.close();
          }
          // A database that also lacks one of this release's migrations is not one it can run on.
          stamp = (
            await sql<{
              timestamp: string;
            }>`select timestamp from kysely_migration where name = '2026-11-23-007-job-runs'`.execute(
              testDb.handle.db,
            )
          ).rows[0]?.timestamp;
          await sql`delete from kysely_migration where name = '2026-11-23-007-job-runs'`.execute(
            testDb.handle.db,
          );
          await expect(openDatabase(testDb.url)).rejects.toThrow(
            /2026-11-23-007-job-runs are missing, but a newer release ran 2099-01-01-999-from-the-future/,
          );
        } finally {
          await sql`delete from kysely_migration where name = '2099-01-01-999-from-the-future'`.execute(
            testDb.handle.db,
          );
          if (stamp)
            await sql`insert into kysely_migration (name, timestamp) values ('2026-11-23-007-job-runs', ${stamp})`.execute(
              testDb.handle.db,
            );
          await sql`drop table future_only`.execute(testDb.handle.db);
        }
        const restored = await openDatabase(testDb.url);
        await restored.close();
        expect(restored.schemaAhead).toEqual([]);
      });

      it('stores a new approval with its request and approver announcements', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          djbh: 'AAAAAAAAAAAa',
          title: '扩容 storage',
          messageTs: null,
          decision: 'pending',
          tracking: 'active',
          createdAt: T0,
          nextCheckAt: T0,
          checkFailures: 0,
        });
        const pending = await store.pendingAnnouncements(10);
        expect(pending.map((a) => a.id)).toEqual([
          'AAAAAAAAAAAa:approver-dm',
          'AAAAAAAAAAAa:request',
        ]);
      });

      it('stores nothing when the approval number is already taken', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await expect(
          store.createApproval(approval('AAAAAAAAAAAa', { title: 'other' }), T0),
        ).rejects.toThrow();
        expect((await store.getApproval('AAAAAAAAAAAa'))?.title).toBe('扩容 storage');
        expect(await store.pendingAnnouncements(10)).toHaveLength(2);
      });

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
          channelId: 'D0DM',
          messageTs: '1700000000.000100',
        });
        // …and queues the edit that links the approver's DM to the thread.
        expect((await store.pendingAnnouncements(10)).map((a) => a.id)).toEqual([
          'AAAAAAAAAAAa:approver-dm',
          'AAAAAAAAAAAa:approver-dm-update:thread',
        ]);
      });

      it('keeps the thread a request was to join, unless it went elsewhere', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa', { threadTs: '1700000000.000001' }), T0);
        await store.createApproval(approval('BBBBBBBBBBBb', { threadTs: '1700000000.000002' }), T0);
        const send = async (djbh: string, channel: string) => {
          const request = (await store.pendingAnnouncements(10)).find(
            (a) => a.id === `${djbh}:request`,
          );
          const claim = request && (await store.claimAnnouncement(request, T0, 30_000));
          await store.markAnnouncementSent(claim ?? NO_CLAIM, { channel, ts: '1700000001.1' }, T0);
        };
        await send('AAAAAAAAAAAa', 'C2147483705');
        await send('BBBBBBBBBBBb', 'D0DM');
        expect((await store.getApproval('AAAAAAAAAAAa'))?.threadTs).toBe('1700000000.000001');
        expect(await store.getApproval('BBBBBBBBBBBb')).toMatchObject({
          channelId: 'D0DM',
          threadTs: null,
        });
      });

      it('owes a workflow step its completion once the approval it started ends, and only such a step', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa', { functionExecutionId: 'Fx1' }), T0);
        await store.createApproval(approval('BBBBBBBBBBBb'), T0);
        await store.createApproval(approval('CCCCCCCCCCCc', { functionExecutionId: 'Fx3' }), T0);
        const steps = async () =>
          (await store.pendingAnnouncements(100))
            .filter((a) => a.kind === 'step-complete')
            .map((a) => a.id);
        const decided = {
          decidedBy: 'maria.lopez@corp.example',
          now: later(5),
          nextCheckAt: later(5),
        };
        // A decision the service has not closed yet owes nothing.
        await store.recordDecision('AAAAAAAAAAAa', {
          ...decided,
          decision: 'approved',
          ended: false,
        });
        expect(await steps()).toEqual([]);
        await store.recordDecision('AAAAAAAAAAAa', {
          ...decided,
          decision: 'approved',
          ended: true,
        });
        await store.recordDecision('BBBBBBBBBBBb', {
          ...decided,
          decision: 'approved',
          ended: true,
        });
        await store.giveUp('CCCCCCCCCCCc', later(10));
        expect((await steps()).sort()).toEqual([
          'AAAAAAAAAAAa:step-complete',
          'CCCCCCCCCCCc:step-complete',
        ]);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          functionExecutionId: 'Fx1',
        });
      });

      it('claims only due, active, unleased approvals, and not twice within the lease', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.createApproval(approval('BBBBBBBBBBBb'), T0);
        await store.recordCheck('BBBBBBBBBBBb', {
          now: T0,
          nextCheckAt: later(60_000),
          failed: false,
        });
        const first = await store.claimDue(later(1000), 10, 300);
        expect(first.map((a) => a.djbh)).toEqual(['AAAAAAAAAAAa']);
        expect(await store.claimDue(later(2000), 10, 300)).toEqual([]);
        // The lease is on the database's clock: a replica whose clock is ahead does not take over.
        expect((await store.claimDue(later(50_000), 10, 300)).map((a) => a.djbh)).toEqual([]);
        expect((await store.claimDue(later(65_000), 10, 300)).map((a) => a.djbh)).toEqual([
          'BBBBBBBBBBBb',
        ]);
        // The lease runs out: a replica that died while holding it does not strand the approval.
        await new Promise((r) => setTimeout(r, 400));
        expect((await store.claimDue(later(70_000), 10, 300)).map((a) => a.djbh)).toEqual([
          'AAAAAAAAAAAa',
          'BBBBBBBBBBBb',
        ]);
      });

      it('gives each of two replicas claiming at once a different set of approvals', async () => {
        const djbhs = Array.from({ length: 20 }, (_, i) => `R${String(i).padStart(10, '0')}x`);
        for (const djbh of djbhs) await store.createApproval(approval(djbh), T0);
        const other = await openDatabase(testDb.url);
        try {
          const replica = createApprovalStore(other.db, other.dialect);
          const [a, b] = await Promise.all([
            store.claimDue(later(1), 12, 30_000),
            replica.claimDue(later(1), 12, 30_000),
          ]);
          const claimed = [...a, ...b].map((x) => x.djbh);
          expect(new Set(claimed).size).toBe(claimed.length);
          expect(claimed.length).toBe(20);
        } finally {
          await other.close();
        }
      });

      it('records a decision and its announcement together, once however often it is recorded', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const change = {
          decision: 'approved' as const,
          decidedBy: 'maria.lopez@corp.example',
          ended: true,
          now: later(5000),
          nextCheckAt: later(5000),
        };
        await store.recordDecision('AAAAAAAAAAAa', change);
        await store.recordDecision('AAAAAAAAAAAa', change);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          decision: 'approved',
          tracking: 'finished',
          decidedBy: 'maria.lopez@corp.example',
        });
        const ids = (await store.pendingAnnouncements(10)).map((a) => a.id);
        expect(ids.filter((id) => id === 'AAAAAAAAAAAa:decision:approved')).toHaveLength(1);
        expect(ids.filter((id) => id === 'AAAAAAAAAAAa:parent-update:approved')).toHaveLength(1);
        expect(ids.filter((id) => id === 'AAAAAAAAAAAa:approver-dm-update:approved')).toHaveLength(
          1,
        );
        expect(await store.claimDue(later(60_000), 10, 1000)).toEqual([]);
      });

      it('counts failed checks and resets the count after a good one', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.recordCheck('AAAAAAAAAAAa', { now: T0, nextCheckAt: T0, failed: true });
        await store.recordCheck('AAAAAAAAAAAa', { now: T0, nextCheckAt: T0, failed: true });
        expect((await store.getApproval('AAAAAAAAAAAa'))?.checkFailures).toBe(2);
        await store.recordCheck('AAAAAAAAAAAa', {
          now: T0,
          nextCheckAt: later(1000),
          failed: false,
        });
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          checkFailures: 0,
          lastCheckedAt: T0,
          nextCheckAt: later(1000),
        });
      });

      it('gives up on an approval with an announcement saying so', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.giveUp('AAAAAAAAAAAa', later(1000));
        expect((await store.getApproval('AAAAAAAAAAAa'))?.tracking).toBe('gave-up');
        expect((await store.pendingAnnouncements(10)).map((a) => a.kind)).toContain('gave-up');
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
          'dm:maria.lopez@corp.example approver-dm',
          'post:C2147483705 request',
        ]);
        const claim = await store.claimAnnouncement(await pending('request'), later(10), 30_000);
        await store.markAnnouncementFinal(claim ?? NO_CLAIM, 'failed', 'invalid_blocks');
        // Without a thread, the decision goes to the requester's DM: a lane of its own.
        expect(await kinds()).toEqual([
          'dm:maria.lopez@corp.example approver-dm',
          'edit:C2147483705 parent-update',
          'requester:U2147483697 decision',
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
        await store.createApproval(approval('BBBBBBBBBBBb', { channelId: 'C2' }), later(1));
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

      it('records nothing and announces nothing for a poll pass that lost its claim', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const [mine] = await store.claimDue(later(1), 10, 60_000);
        // The pass outlives its lease; another replica claims the approval.
        await testDb.handle.db.updateTable('tracked_approvals').set({ lease_until: 0 }).execute();
        const [theirs] = await store.claimDue(later(2), 10, 60_000);
        expect(mine?.checkClaim).toBeTruthy();
        expect(theirs?.checkClaim).not.toBe(mine?.checkClaim);
        const decision = {
          decision: 'approved' as const,
          decidedBy: null,
          ended: true,
          now: later(3),
          nextCheckAt: later(3),
        };
        expect(await store.recordDecision('AAAAAAAAAAAa', decision, mine?.checkClaim)).toBe(false);
        expect(await store.recordReminder('AAAAAAAAAAAa', 1, later(3), mine?.checkClaim)).toBe(
          false,
        );
        expect(await store.giveUp('AAAAAAAAAAAa', later(3), mine?.checkClaim)).toBe(false);
        expect(
          await store.recordCheck(
            'AAAAAAAAAAAa',
            { now: later(3), nextCheckAt: later(9), failed: false },
            mine?.checkClaim,
          ),
        ).toBe(false);
        expect((await store.pendingAnnouncements(10)).map((a) => a.kind).sort()).toEqual([
          'approver-dm',
          'request',
        ]);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({ decision: 'pending' });
        // The current claim records as before.
        expect(await store.recordDecision('AAAAAAAAAAAa', decision, theirs?.checkClaim)).toBe(true);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({ decision: 'approved' });
      });

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

      it('pages requests by requester and open approvals by approver, newest first, with totals', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.createApproval(
          approval('BBBBBBBBBBBb', {
            createdAt: later(1000),
            approverLogin: 'chen.hao@corp.example',
          }),
          T0,
        );
        await store.createApproval(
          approval('CCCCCCCCCCCc', {
            createdAt: later(2000),
            approverLogin: 'chen.hao@corp.example',
          }),
          T0,
        );
        await store.recordDecision('CCCCCCCCCCCc', {
          decision: 'approved',
          decidedBy: null,
          ended: true,
          now: later(3000),
          nextCheckAt: later(3000),
        });
        const mine = await store.requestedBy('li.wei@corp.example', 2);
        expect(mine.approvals.map((a) => a.djbh)).toEqual(['CCCCCCCCCCCc', 'BBBBBBBBBBBb']);
        expect(mine.total).toBe(3);
        const waiting = await store.waitingFor('chen.hao@corp.example', 10);
        expect(waiting).toMatchObject({ total: 1, approvals: [{ djbh: 'BBBBBBBBBBBb' }] });
      });

      it('records a reminder with its DM and thread note once per occurrence', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.recordReminder('AAAAAAAAAAAa', 1, later(86_400_000));
        await store.recordReminder('AAAAAAAAAAAa', 1, later(86_400_000));
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          remindersSent: 1,
          lastRemindedAt: later(86_400_000),
        });
        const reminders = (await store.pendingAnnouncements(10)).filter((a) => a.occurrence === 1);
        expect(reminders.map((a) => a.id).sort()).toEqual([
          'AAAAAAAAAAAa:reminder-note:1',
          'AAAAAAAAAAAa:reminder:1',
        ]);
      });

      /** Records reminder `n` and delivers its DM to the approver, as the dispatcher would. */
      async function remindAndDeliver(djbh: string, n: number, at: Date) {
        await store.recordReminder(djbh, n, at);
        const dm = (await store.pendingAnnouncements(100)).find(
          (a) => a.id === `${djbh}:reminder:${n}`,
        );
        const claim = dm && (await store.claimAnnouncement(dm, at, 30_000));
        if (!claim) throw new Error(`could not claim reminder ${n}`);
        await store.markAnnouncementSent(
          claim,
          { channel: 'D0MARIA', ts: `17000000${n}.0001` },
          at,
        );
      }

      const LEADER = { login: 'chen.hao@corp.example', chatId: 'U0CHEN' };

      it('records an escalation once, with the leader’s DM and the thread note, after that many delivered reminders', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const escalate = (at: Date) =>
          store.recordEscalation('AAAAAAAAAAAa', {
            to: LEADER,
            afterReminders: 2,
            answerWithinMs: 0,
            now: at,
          });
        await remindAndDeliver('AAAAAAAAAAAa', 1, later(1000));
        // One reminder delivered is not two.
        expect(await escalate(later(2000))).toBe(false);
        // Two recorded, but the second not delivered yet: not unanswered, it was never seen.
        await store.recordReminder('AAAAAAAAAAAa', 2, later(3000));
        expect(await escalate(later(4000))).toBe(false);
        const second = await pending('reminder');
        const claim = await store.claimAnnouncement(second, later(5000), 30_000);
        await store.markAnnouncementSent(
          claim ?? NO_CLAIM,
          { channel: 'D0MARIA', ts: '1700000002.0001' },
          later(5000),
        );
        expect(await escalate(later(6000))).toBe(true);
        // Again, from a retried pass or another replica: nothing more.
        expect(await escalate(later(7000))).toBe(false);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          escalatedAt: later(6000),
          escalatedTo: LEADER,
        });
        const escalation = (await store.pendingAnnouncements(100)).filter((a) =>
          a.kind.startsWith('escalation'),
        );
        expect(escalation.map((a) => a.id).sort()).toEqual([
          'AAAAAAAAAAAa:escalation-note:2',
          'AAAAAAAAAAAa:escalation:2',
        ]);
        // The leader's DM goes in that person's own DM lane; the note waits for the DM.
        const lanes = (await store.deliverable(later(8000), { limit: 10, skipLanes: [] })).map(
          (d) => [d.announcement.kind, d.lane],
        );
        expect(lanes).toContainEqual(['escalation', 'dm:chen.hao@corp.example']);
        expect(lanes.map(([kind]) => kind)).not.toContain('escalation-note');
      });

      it('does not count a reminder that posted nothing, and never escalates a decided, ended or unreachable approval', async () => {
        for (const djbh of ['AAAAAAAAAAAa', 'BBBBBBBBBBBb', 'CCCCCCCCCCCc', 'DDDDDDDDDDDd'])
          await store.createApproval(approval(djbh), T0);
        // A reminder delivered as nothing (nobody to post to) was not seen by anyone.
        await store.recordReminder('AAAAAAAAAAAa', 1, later(1000));
        const nothing = await store.claimAnnouncement(
          await pending('reminder'),
          later(1000),
          30_000,
        );
        await store.markAnnouncementSent(nothing ?? NO_CLAIM, { channel: '', ts: '' }, later(1000));
        expect(
          await store.recordEscalation('AAAAAAAAAAAa', {
            to: LEADER,
            afterReminders: 1,
            answerWithinMs: 0,
            now: later(2000),
          }),
        ).toBe(false);

        for (const djbh of ['BBBBBBBBBBBb', 'CCCCCCCCCCCc', 'DDDDDDDDDDDd'])
          await remindAndDeliver(djbh, 1, later(1000));
        await store.recordDecision('BBBBBBBBBBBb', {
          decision: 'rejected',
          decidedBy: null,
          ended: true,
          now: later(1500),
          nextCheckAt: later(1500),
        });
        await store.finish('CCCCCCCCCCCc', 'ended', later(1500));
        await testDb.handle.db
          .updateTable('tracked_approvals')
          .set({ approver_unreachable_since: later(1500).getTime() })
          .where('djbh', '=', 'DDDDDDDDDDDd')
          .execute();
        for (const djbh of ['BBBBBBBBBBBb', 'CCCCCCCCCCCc', 'DDDDDDDDDDDd'])
          expect(
            await store.recordEscalation(djbh, {
              to: LEADER,
              afterReminders: 1,
              answerWithinMs: 0,
              now: later(2000),
            }),
          ).toBe(false);
        expect(
          (await store.pendingAnnouncements(100)).filter((a) => a.kind.startsWith('escalation')),
        ).toEqual([]);
      });

      it('records once that nobody could be escalated to, announcing nothing, and not for a pass that lost its claim', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await remindAndDeliver('AAAAAAAAAAAa', 1, later(1000));
        const [mine] = await store.claimDue(later(2000), 10, 60_000);
        await testDb.handle.db.updateTable('tracked_approvals').set({ lease_until: 0 }).execute();
        const [theirs] = await store.claimDue(later(3000), 10, 60_000);
        const escalation = { to: LEADER, afterReminders: 1, answerWithinMs: 0, now: later(4000) };
        expect(await store.recordEscalation('AAAAAAAAAAAa', escalation, mine?.checkClaim)).toBe(
          false,
        );
        expect(
          await store.recordEscalation(
            'AAAAAAAAAAAa',
            { ...escalation, to: null },
            theirs?.checkClaim,
          ),
        ).toBe(true);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          escalatedAt: later(4000),
          escalatedTo: null,
        });
        expect(await store.recordEscalation('AAAAAAAAAAAa', escalation)).toBe(false);
        expect(
          (await store.pendingAnnouncements(100)).filter((a) => a.kind.startsWith('escalation')),
        ).toEqual([]);
      });

      it('counts a reminder as unanswered a full interval after the attempt that delivered it, however late, and says the count it escalated on', async () => {
        const HOUR = 3_600_000;
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const unanswered = (at: Date) =>
          store.unansweredReminders('AAAAAAAAAAAa', { now: at, answerWithinMs: HOUR });
        const escalate = (at: Date) =>
          store.recordEscalation('AAAAAAAAAAAa', {
            to: LEADER,
            afterReminders: 2,
            answerWithinMs: HOUR,
            now: at,
          });
        await remindAndDeliver('AAAAAAAAAAAa', 1, later(1000));
        // Reminder 2 recorded at once, but Slack took three hours to take it.
        await store.recordReminder('AAAAAAAAAAAa', 2, later(2000));
        const second = await pending('reminder');
        const claim = await store.claimAnnouncement(second, later(3 * HOUR), 30_000);
        await store.markAnnouncementSent(
          claim ?? NO_CLAIM,
          { channel: 'D0MARIA', ts: '1700000002.0001' },
          later(3 * HOUR),
        );
        // Reminder 3 recorded, not delivered yet: not unanswered, and not said to be.
        await store.recordReminder('AAAAAAAAAAAa', 3, later(3 * HOUR + 1000));
        // Half an hour after reminder 2 reached the approver: it has not had its hour yet.
        expect(await unanswered(later(3.5 * HOUR))).toBe(1);
        expect(await escalate(later(3.5 * HOUR))).toBe(false);
        expect(await unanswered(later(4 * HOUR))).toBe(2);
        expect(await escalate(later(4 * HOUR))).toBe(true);
        const escalation = (await store.pendingAnnouncements(100)).filter((a) =>
          a.kind.startsWith('escalation'),
        );
        expect(escalation.map((a) => a.id).sort()).toEqual([
          'AAAAAAAAAAAa:escalation-note:2',
          'AAAAAAAAAAAa:escalation:2',
        ]);
      });

      it('makes an approver nobody on Slack had reachable again when their login is linked, not one whose recorded account is gone', async () => {
        const links = createAccountLinkStore(testDb.handle.db);
        await testDb.handle.db.deleteFrom('linked_accounts').execute();
        // Not on Slack when requested; a recorded account Slack said is deactivated; someone else.
        await store.createApproval(approval('AAAAAAAAAAAa', { approverSlackId: null }), T0);
        await store.createApproval(approval('BBBBBBBBBBBb'), T0);
        await store.createApproval(
          approval('CCCCCCCCCCCc', { approverSlackId: null, approverLogin: 'liu@corp.example' }),
          T0,
        );
        await testDb.handle.db
          .updateTable('tracked_approvals')
          .set({ approver_unreachable_since: later(1000).getTime() })
          .execute();
        await links.link({
          slackUserId: 'U0MARIAHOME',
          teamId: 'T1',
          login: 'maria.lopez@corp.example',
          name: 'MARIA',
          linkedAt: later(5000),
        });
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          approverUnreachableSince: null,
        });
        expect(await store.getApproval('BBBBBBBBBBBb')).toMatchObject({
          approverUnreachableSince: later(1000),
        });
        expect(await store.getApproval('CCCCCCCCCCCc')).toMatchObject({
          approverUnreachableSince: later(1000),
        });
        // The request message is edited again: it no longer offers Request again.
        expect(
          (await store.pendingAnnouncements(100))
            .filter((a) => a.kind === 'parent-update')
            .map((a) => a.id),
        ).toEqual([`AAAAAAAAAAAa:parent-update:approver-linked-${later(5000).getTime()}`]);
      });

      it('links a Slack user to a service login, replaces and removes the link', async () => {
        const links = createAccountLinkStore(testDb.handle.db);
        await testDb.handle.db.deleteFrom('linked_accounts').execute();
        await links.link({
          slackUserId: 'U1',
          teamId: 'T1',
          login: 'alice@corp.example',
          name: 'ALICE',
          linkedAt: T0,
        });
        await links.link({
          slackUserId: 'U1',
          teamId: 'T1',
          login: 'alice2@corp.example',
          name: 'ALICE2',
          linkedAt: later(1),
        });
        expect(await links.get('U1')).toEqual({
          slackUserId: 'U1',
          teamId: 'T1',
          login: 'alice2@corp.example',
          name: 'ALICE2',
          linkedAt: later(1),
        });
        expect((await links.findByLogin('alice2@corp.example'))?.slackUserId).toBe('U1');
        expect(await links.findByLogin('alice@corp.example')).toBeUndefined();
        expect(await links.unlink('U1')).toBe(true);
        expect(await links.unlink('U1')).toBe(false);
        expect(await links.get('U1')).toBeUndefined();
      });
    },
  );
}
