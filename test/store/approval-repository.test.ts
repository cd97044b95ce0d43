import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handoverOf } from '../../src/approvals/handover.ts';
import { sameLogin } from '../../src/approvals/person.ts';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { openDatabase } from '../../src/store/database.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import {
  approval,
  later,
  NO_CLAIM,
  pendingOf,
  scheduleOf,
  stored,
  T0,
} from '../helpers/store-fixtures.ts';

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `approval repository on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
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

      it('stores a new approval with its request and approver announcements', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        expect(await stored(testDb.handle.db, 'AAAAAAAAAAAa')).toMatchObject({
          approval: {
            djbh: 'AAAAAAAAAAAa',
            request: { title: '扩容 storage', createdAt: T0 },
            slack: { messageTs: null },
            outcome: { decision: 'pending', tracking: 'active' },
          },
          schedule: { nextCheckAt: T0, checkFailures: 0 },
        });
        // In the order they were recorded.
        const pending = await store.pendingAnnouncements(10);
        expect(pending.map((a) => a.id)).toEqual([
          'AAAAAAAAAAAa:request',
          'AAAAAAAAAAAa:approver-dm',
        ]);
      });

      it('numbers a new approval’s announcements on its row, and goes on counting from there', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.recordReminder('AAAAAAAAAAAa', 1, later(10));
        const recorded = await testDb.handle.db
          .selectFrom('announcements')
          .select(['kind', 'seq', 'lane_key'])
          .where('djbh', '=', 'AAAAAAAAAAAa')
          .orderBy('seq')
          .execute();
        expect(recorded).toEqual([
          { kind: 'request', seq: 1, lane_key: 'post:C2147483705' },
          { kind: 'approver-dm', seq: 2, lane_key: 'dm:login:maria.lopez@corp.example' },
          { kind: 'reminder', seq: 3, lane_key: expect.any(String) },
          { kind: 'reminder-note', seq: 4, lane_key: expect.any(String) },
        ]);
        const row = await testDb.handle.db
          .selectFrom('tracked_approvals')
          .select('announcements_recorded')
          .where('djbh', '=', 'AAAAAAAAAAAa')
          .executeTakeFirstOrThrow();
        expect(row.announcements_recorded).toBe(4);
      });

      it('uses up Request again of the approval a new one was requested again from, once', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.createApproval(
          approval('BBBBBBBBBBBb', { request: { againOf: { djbh: 'AAAAAAAAAAAa', link: null } } }),
          later(10),
        );
        await store.createApproval(
          approval('CCCCCCCCCCCc', { request: { againOf: { djbh: 'AAAAAAAAAAAa', link: null } } }),
          later(20),
        );
        expect((await store.getApproval('AAAAAAAAAAAa'))?.request.requestedAgainAs).toMatchObject({
          djbh: 'BBBBBBBBBBBb',
        });
        const old = await testDb.handle.db
          .selectFrom('announcements')
          .select(['id', 'seq', 'lane_key'])
          .where('djbh', '=', 'AAAAAAAAAAAa')
          .orderBy('seq')
          .execute();
        // Its request message is edited, in the lane of that message's edits.
        expect(old).toEqual([
          { id: 'AAAAAAAAAAAa:request', seq: 1, lane_key: 'post:C2147483705' },
          { id: 'AAAAAAAAAAAa:approver-dm', seq: 2, lane_key: 'dm:login:maria.lopez@corp.example' },
          {
            id: 'AAAAAAAAAAAa:parent-update:again:BBBBBBBBBBBb',
            seq: 3,
            lane_key: 'edit:post:C2147483705',
          },
        ]);
        // Both new ones are recorded all the same, with their own announcements.
        for (const djbh of ['BBBBBBBBBBBb', 'CCCCCCCCCCCc'])
          expect((await store.getApproval(djbh))?.request.againOf?.djbh).toBe('AAAAAAAAAAAa');
        expect(await store.pendingAnnouncements(10)).toHaveLength(7);
      });

      it('stores nothing when the approval number is already taken', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await expect(
          store.createApproval(approval('AAAAAAAAAAAa', { request: { title: 'other' } }), T0),
        ).rejects.toThrow();
        expect((await store.getApproval('AAAAAAAAAAAa'))?.request.title).toBe('扩容 storage');
        expect(await store.pendingAnnouncements(10)).toHaveLength(2);
      });

      it('owes a workflow step its completion once the approval it started ends, and only such a step', async () => {
        await store.createApproval(
          approval('AAAAAAAAAAAa', { slack: { functionExecutionId: 'Fx1' } }),
          T0,
        );
        await store.createApproval(approval('BBBBBBBBBBBb'), T0);
        await store.createApproval(
          approval('CCCCCCCCCCCc', { slack: { functionExecutionId: 'Fx3' } }),
          T0,
        );
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
          slack: { functionExecutionId: 'Fx1' },
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
        expect(first.map((a) => a.approval.djbh)).toEqual(['AAAAAAAAAAAa']);
        expect(await store.claimDue(later(2000), 10, 300)).toEqual([]);
        // The lease is on the database's clock: a replica whose clock is ahead does not take over.
        expect((await store.claimDue(later(50_000), 10, 300)).map((a) => a.approval.djbh)).toEqual(
          [],
        );
        expect((await store.claimDue(later(65_000), 10, 300)).map((a) => a.approval.djbh)).toEqual([
          'BBBBBBBBBBBb',
        ]);
        // The lease runs out: a replica that died while holding it does not strand the approval.
        await new Promise((r) => setTimeout(r, 400));
        expect((await store.claimDue(later(70_000), 10, 300)).map((a) => a.approval.djbh)).toEqual([
          'AAAAAAAAAAAa',
          'BBBBBBBBBBBb',
        ]);
      });

      it('marks hot only the newest approvals waiting for one approver (any case of the login), due now', async () => {
        const djbhs = ['H0000000001x', 'H0000000002x', 'H0000000003x'];
        for (const [i, djbh] of djbhs.entries())
          await store.createApproval(
            approval(djbh, { request: { createdAt: later(i * 1000) } }),
            T0,
          );
        await store.createApproval(
          approval('OTHERAPPROVx', { parties: { approver: { login: 'chen.hao@corp.example' } } }),
          T0,
        );
        await store.createApproval(approval('DECIDEDAPPRx'), T0);
        await store.recordDecision('DECIDEDAPPRx', {
          decision: 'approved',
          decidedBy: 'maria.lopez@corp.example',
          ended: true,
          now: T0,
          nextCheckAt: later(60_000),
        });
        // Checked and not due for an hour, as an old approval is.
        for (const djbh of [...djbhs, 'OTHERAPPROVx'])
          await store.recordCheck(djbh, { now: T0, nextCheckAt: later(3_600_000), failed: false });
        const now = later(10_000);
        const until = later(10_000 + 900_000);
        expect(await store.markHot('Maria.Lopez@corp.example', now, until, 2)).toBe(2);
        // Only hot ones are claimed by a hot pass; the newest two, due at the mark.
        const hot = await store.claimDue(later(10_001), 10, 30_000, { hotOnly: true });
        expect(hot.map((a) => a.approval.djbh).sort()).toEqual(['H0000000002x', 'H0000000003x']);
        expect(hot.map((a) => a.schedule.hotUntil)).toEqual([until, until]);
        expect(hot.map((a) => a.schedule.nextCheckAt)).toEqual([now, now]);
        // Nothing else is hot or due: not the oldest, not another approver's, not a decided one.
        expect(await store.claimDue(later(10_001), 10, 30_000)).toEqual([]);
        expect((await scheduleOf(testDb.handle.db, 'H0000000001x'))?.hotUntil).toBeNull();
        expect((await scheduleOf(testDb.handle.db, 'OTHERAPPROVx'))?.hotUntil).toBeNull();
        // A mark never makes a due check later.
        await store.createApproval(
          approval('DUEALREADYYx', { request: { createdAt: later(5000) } }),
          T0,
        );
        await store.markHot('maria.lopez@corp.example', later(20_000), until, 1);
        expect((await scheduleOf(testDb.handle.db, 'DUEALREADYYx'))?.nextCheckAt).toEqual(T0);
      });

      it('gives each of two replicas claiming at once a different set of approvals', async () => {
        const djbhs = Array.from({ length: 20 }, (_, i) => `R${String(i).padStart(10, '0')}x`);
        for (const djbh of djbhs) await store.createApproval(approval(djbh), T0);
        const other = await openDatabase(testDb.url);
        try {
          const replica = createApprovalStores(other.db, other.dialect);
          const [a, b] = await Promise.all([
            store.claimDue(later(1), 12, 30_000),
            replica.claimDue(later(1), 12, 30_000),
          ]);
          const claimed = [...a, ...b].map((x) => x.approval.djbh);
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
          outcome: {
            decision: 'approved',
            tracking: 'finished',
            decidedBy: 'maria.lopez@corp.example',
          },
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
        expect((await scheduleOf(testDb.handle.db, 'AAAAAAAAAAAa'))?.checkFailures).toBe(2);
        await store.recordCheck('AAAAAAAAAAAa', {
          now: T0,
          nextCheckAt: later(1000),
          failed: false,
        });
        expect(await stored(testDb.handle.db, 'AAAAAAAAAAAa')).toMatchObject({
          schedule: { checkFailures: 0, lastCheckedAt: T0, nextCheckAt: later(1000) },
        });
      });

      it('records a batch of unchanged checks at once, each only while its own claim holds', async () => {
        for (const djbh of ['AAAAAAAAAAAa', 'BBBBBBBBBBBb', 'CCCCCCCCCCCc'])
          await store.createApproval(approval(djbh), T0);
        const claimed = await store.claimDue(later(1), 10, 60_000);
        const claimOf = (djbh: string) =>
          claimed.find((a) => a.approval.djbh === djbh)?.claim ?? null;
        await store.recordCheck('AAAAAAAAAAAa', { now: T0, nextCheckAt: T0, failed: true });
        // Another pass took C since (this pass outlived its lease).
        await testDb.handle.db
          .updateTable('tracked_approvals')
          .set({ check_token: 'theirs' })
          .where('djbh', '=', 'CCCCCCCCCCCc')
          .execute();
        const recorded = await store.recordChecks(
          [
            {
              djbh: 'AAAAAAAAAAAa',
              claim: claimOf('AAAAAAAAAAAa'),
              nextCheckAt: later(9_000),
              unknown: false,
            },
            {
              djbh: 'BBBBBBBBBBBb',
              claim: claimOf('BBBBBBBBBBBb'),
              nextCheckAt: later(8_000),
              unknown: true,
            },
            {
              djbh: 'CCCCCCCCCCCc',
              claim: claimOf('CCCCCCCCCCCc'),
              nextCheckAt: later(7_000),
              unknown: false,
            },
          ],
          later(5),
        );
        expect(recorded.map((r) => r.djbh).sort()).toEqual(['AAAAAAAAAAAa', 'BBBBBBBBBBBb']);
        expect(recorded.find((r) => r.djbh === 'AAAAAAAAAAAa')?.claim).toBe(
          claimOf('AAAAAAAAAAAa'),
        );
        expect(await stored(testDb.handle.db, 'AAAAAAAAAAAa')).toMatchObject({
          approval: { outcome: { unknownSince: null } },
          schedule: { checkFailures: 0, lastCheckedAt: later(5), nextCheckAt: later(9_000) },
        });
        expect(await stored(testDb.handle.db, 'BBBBBBBBBBBb')).toMatchObject({
          approval: { outcome: { unknownSince: later(5) } },
          schedule: { lastCheckedAt: later(5), nextCheckAt: later(8_000) },
        });
        // Unknown since the first check that found it unknown, not the latest.
        await store.recordChecks(
          [{ djbh: 'BBBBBBBBBBBb', claim: null, nextCheckAt: later(9_000), unknown: true }],
          later(50),
        );
        expect((await store.getApproval('BBBBBBBBBBBb'))?.outcome.unknownSince).toEqual(later(5));
        expect(await stored(testDb.handle.db, 'CCCCCCCCCCCc')).toMatchObject({
          schedule: { lastCheckedAt: null, nextCheckAt: T0 },
        });
        expect(await store.recordChecks([], later(60))).toEqual([]);
      });

      it('gives up on an approval with an announcement saying so', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.giveUp('AAAAAAAAAAAa', later(1000));
        expect((await store.getApproval('AAAAAAAAAAAa'))?.outcome.tracking).toBe('gave-up');
        expect((await store.pendingAnnouncements(10)).map((a) => a.kind)).toContain('gave-up');
      });

      it('records nothing and announces nothing for a poll pass that lost its claim', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        const [mine] = await store.claimDue(later(1), 10, 60_000);
        // The pass outlives its lease; another replica claims the approval.
        await testDb.handle.db.updateTable('tracked_approvals').set({ lease_until: 0 }).execute();
        const [theirs] = await store.claimDue(later(2), 10, 60_000);
        expect(mine?.claim).toBeTruthy();
        expect(theirs?.claim).not.toBe(mine?.claim);
        const decision = {
          decision: 'approved' as const,
          decidedBy: null,
          ended: true,
          now: later(3),
          nextCheckAt: later(3),
        };
        expect(await store.recordDecision('AAAAAAAAAAAa', decision, mine?.claim)).toBe(false);
        expect(await store.recordReminder('AAAAAAAAAAAa', 1, later(3), mine?.claim)).toBe(false);
        expect(await store.giveUp('AAAAAAAAAAAa', later(3), mine?.claim)).toBe(false);
        expect(
          await store.recordCheck(
            'AAAAAAAAAAAa',
            { now: later(3), nextCheckAt: later(9), failed: false },
            mine?.claim,
          ),
        ).toBe(false);
        expect((await store.pendingAnnouncements(10)).map((a) => a.kind).sort()).toEqual([
          'approver-dm',
          'request',
        ]);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          outcome: { decision: 'pending' },
        });
        // The current claim records as before.
        expect(await store.recordDecision('AAAAAAAAAAAa', decision, theirs?.claim)).toBe(true);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          outcome: { decision: 'approved' },
        });
      });

      it('pages requests by requester and open approvals by approver, newest first, with totals', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.createApproval(
          approval('BBBBBBBBBBBb', {
            request: { createdAt: later(1000) },
            parties: { approver: { login: 'chen.hao@corp.example' } },
          }),
          T0,
        );
        await store.createApproval(
          approval('CCCCCCCCCCCc', {
            request: { createdAt: later(2000) },
            parties: { approver: { login: 'chen.hao@corp.example' } },
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

      it('finds a person’s approvals by login whatever case either side spells it in', async () => {
        await store.createApproval(
          approval('AAAAAAAAAAAa', { parties: { requester: { login: 'Li.Wei@corp.example' } } }),
          T0,
        );
        await store.createApproval(
          approval('BBBBBBBBBBBb', {
            parties: {
              requester: { login: 'sam.taylor@corp.example' },
              approver: { login: 'chen.hao@corp.example' },
            },
          }),
          T0,
        );
        // Logins compare one way everywhere (approvals/person.ts), the store's lookups too.
        const mine = await store.requestedBy('li.wei@CORP.example', 10);
        expect(mine.approvals.map((a) => a.djbh)).toEqual(['AAAAAAAAAAAa']);
        const waiting = await store.waitingFor('Chen.Hao@corp.example', 10);
        expect(waiting.approvals.map((a) => a.djbh)).toEqual(['BBBBBBBBBBBb']);
      });

      it('finds by login every approval of a login person.ts calls the same, letters outside ASCII too', async () => {
        // Status asks person.ts, list and Home ask the store: what one calls the same person the
        // other must find, or a leader or approver sees an approval in status and not in the list.
        const pairs: Array<[string, string]> = [
          ['\u00C9lodie.Martin@corp.example', '\u00E9lodie.martin@corp.example'],
          ['\u212Aate@corp.example', 'kate@corp.example'],
          ['\u0130van@corp.example', 'i\u0307van@corp.example'],
          ['Chen.Hao@corp.example', 'chen.hao@corp.example'],
        ];
        const numbers = ['AAAAAAAAAAAa', 'BBBBBBBBBBBb', 'CCCCCCCCCCCc', 'DDDDDDDDDDDd'];
        for (const [i, [recorded]] of pairs.entries())
          await store.createApproval(
            approval(numbers[i] ?? '', {
              parties: { approver: { login: recorded }, requester: { login: recorded } },
            }),
            T0,
          );
        for (const [i, [recorded, asked]] of pairs.entries()) {
          if (!sameLogin(recorded, asked)) continue;
          const waiting = await store.waitingFor(asked, 10);
          expect(
            waiting.approvals.map((a) => a.djbh),
            `${asked} waits for ${recorded}`,
          ).toContain(numbers[i]);
          const mine = await store.requestedBy(asked, 10);
          expect(
            mine.approvals.map((a) => a.djbh),
            `${asked} asked as ${recorded}`,
          ).toContain(numbers[i]);
        }
      });

      it('records a reminder with its DM and thread note once per occurrence', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.recordReminder('AAAAAAAAAAAa', 1, later(86_400_000));
        await store.recordReminder('AAAAAAAAAAAa', 1, later(86_400_000));
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          followUp: { remindersSent: 1, lastRemindedAt: later(86_400_000) },
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
          followUp: { escalatedAt: later(6000), escalatedTo: LEADER },
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
        expect(lanes).toContainEqual(['escalation', 'dm:login:chen.hao@corp.example']);
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
        expect(await store.recordEscalation('AAAAAAAAAAAa', escalation, mine?.claim)).toBe(false);
        expect(
          await store.recordEscalation('AAAAAAAAAAAa', { ...escalation, to: null }, theirs?.claim),
        ).toBe(true);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          followUp: { escalatedAt: later(4000), escalatedTo: null },
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

      it('makes an approver reachable again when their login is linked, whatever account the approval recorded, and records the linked one', async () => {
        const links = createAccountLinkStore(testDb.handle.db, testDb.handle.dialect);
        await testDb.handle.db.deleteFrom('linked_accounts').execute();
        // Not on Slack when requested; a recorded account Slack said is deactivated; someone else.
        await store.createApproval(
          approval('AAAAAAAAAAAa', { parties: { approver: { slackId: null } } }),
          T0,
        );
        await store.createApproval(approval('BBBBBBBBBBBb'), T0);
        await store.createApproval(
          approval('CCCCCCCCCCCc', {
            parties: { approver: { slackId: null, login: 'liu@corp.example' } },
          }),
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
          parties: { approver: { unreachableSince: null } },
        });
        // The account it recorded is gone: the linked one is who the messages go to now (they
        // are addressed by login as they go), and a previous release is told by the row.
        expect(await store.getApproval('BBBBBBBBBBBb')).toMatchObject({
          parties: { approver: { unreachableSince: null, slackId: 'U0MARIAHOME' } },
        });
        expect(await store.getApproval('CCCCCCCCCCCc')).toMatchObject({
          parties: { approver: { unreachableSince: later(1000), slackId: null } },
        });
        // The request messages are edited again: they no longer offer Request again.
        expect(
          (await store.pendingAnnouncements(100))
            .filter((a) => a.kind === 'parent-update')
            .map((a) => a.id)
            .sort(),
        ).toEqual([
          `AAAAAAAAAAAa:parent-update:approver-linked-${later(5000).getTime()}`,
          `BBBBBBBBBBBb:parent-update:approver-linked-${later(5000).getTime()}`,
        ]);
        // Removed again: the approvals stop recording the account, and nothing else changes.
        expect(await links.unlink('U0MARIAHOME')).toBe(true);
        expect(await store.getApproval('BBBBBBBBBBBb')).toMatchObject({
          parties: { approver: { slackId: null } },
        });
      });

      it('records a handover once, fenced by the claim and the term, and drops what waited for the approver before', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.recordReminder('AAAAAAAAAAAa', 1, later(1));
        const [claimed] = await store.claimDue(later(2), 10, 60_000);
        if (!claimed) throw new Error('not claimed');
        const before = (await store.getApproval('AAAAAAAAAAAa')) ?? claimed.approval;
        const handover = handoverOf(before, {
          decision: 'pending',
          unknown: false,
          ended: false,
          approver: 'Alex.Kim@corp.example',
        });
        if (!handover) throw new Error('no handover');
        const record = (claim: string | null) =>
          store.recordHandover(
            'AAAAAAAAAAAa',
            { ...handover, now: later(3), nextCheckAt: later(9) },
            claim,
          );
        // A pass whose claim was taken records nothing; the one holding it records it once.
        expect(await record('someone-else')).toBe(false);
        expect(await record(claimed.claim)).toBe(true);
        expect(await record(claimed.claim)).toBe(false);
        expect(await record(null)).toBe(false);
        expect(await store.getApproval('AAAAAAAAAAAa')).toMatchObject({
          parties: {
            approver: { login: 'Alex.Kim@corp.example', slackId: null, term: 1, since: later(3) },
            // Her DM never went out: she was shown nothing, and may not see it from now on.
            formerApprovers: [],
          },
          followUp: { remindersSent: 0, lastRemindedAt: null, escalatedAt: null },
        });
        const all = await testDb.handle.db
          .selectFrom('announcements')
          .select(['id', 'state'])
          .orderBy('seq')
          .execute();
        expect(all.map((a) => `${a.id} ${a.state}`)).toEqual([
          'AAAAAAAAAAAa:request pending',
          // Maria's DM and reminder had not gone out: hers, not Alex's.
          'AAAAAAAAAAAa:approver-dm skipped',
          'AAAAAAAAAAAa:reminder:1 skipped',
          'AAAAAAAAAAAa:reminder-note:1 skipped',
          'AAAAAAAAAAAa:handed-over:1 pending',
          'AAAAAAAAAAAa:approver-dm@1 pending',
          'AAAAAAAAAAAa:parent-update:handed-over:1 pending',
        ]);
        // Alex's own reminders start from one, under ids of his own.
        await store.recordReminder('AAAAAAAAAAAa', 1, later(4));
        expect((await store.pendingAnnouncements(20)).map((a) => a.id)).toContain(
          'AAAAAAAAAAAa:reminder:1@1',
        );
        // Alex's list has it, Maria's no longer.
        expect((await store.waitingFor('alex.kim@corp.example', 10)).total).toBe(1);
        expect((await store.waitingFor('maria.lopez@corp.example', 10)).total).toBe(0);
      });

      it('keeps as a former approver only one whose DM went out, however often it is handed on', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        // Maria's DM went out: she was shown the approval.
        const dm = (await store.pendingAnnouncements(10)).find((a) => a.kind === 'approver-dm');
        if (!dm) throw new Error('no DM');
        const claimedDm = await store.claimAnnouncement(dm, later(1), 30_000);
        if (!claimedDm) throw new Error('DM not claimed');
        await store.markAnnouncementSent(claimedDm, { channel: 'D0MARIA', ts: '1.1' }, later(1));
        const handOn = async (to: string, at: number) => {
          const [claimed] = await store.claimDue(later(at), 10, 60_000);
          if (!claimed) throw new Error('not claimed');
          const status = { decision: 'pending', unknown: false, ended: false, approver: to };
          const handover = handoverOf(claimed.approval, status);
          if (!handover) throw new Error('no handover');
          const next = { ...handover, now: later(at), nextCheckAt: later(at + 1) };
          expect(await store.recordHandover('AAAAAAAAAAAa', next, claimed.claim)).toBe(true);
          return (await store.getApproval('AAAAAAAAAAAa'))?.parties.formerApprovers.map(
            (p) => p.login,
          );
        };
        // To Alex, whose DM never goes out, then on to Chen, then back to Maria.
        expect(await handOn('alex.kim@corp.example', 2)).toEqual(['maria.lopez@corp.example']);
        expect(await handOn('chen.hao@corp.example', 4)).toEqual(['maria.lopez@corp.example']);
        expect(await handOn('maria.lopez@corp.example', 6)).toEqual([]);
      });
    },
  );
}
