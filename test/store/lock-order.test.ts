import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NOTHING_POSTED } from '../../src/approvals/announcer.ts';
import { handoverOf } from '../../src/approvals/handover.ts';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { createRetentionStore } from '../../src/store/retention-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { lockWaiters, withHolderAndWatcher } from '../helpers/postgres-locks.ts';
import { approval, later, T0 } from '../helpers/store-fixtures.ts';

// One lock order for an approval and its announcements (outbox-store.ts, lockApprovalFirst): a
// handover (the approval's row, then its approver's pending announcements) and a delivery that
// finds the approver unreachable (its announcement, then the approval's row) took them in
// opposite orders, and on Postgres one of the two was killed as a deadlock (40P01); the retention
// purge deleted an approval's announcements before its row. SQLite has one writer at a time and
// cannot deadlock; only Postgres runs here.

const postgres = TEST_DATABASES.find((d) => d.name === 'postgres');
if (!postgres) throw new Error('no Postgres in TEST_DATABASES');
const UNREACHABLE = { ...NOTHING_POSTED, approverUnreachable: true };
const NEW_APPROVER = 'alex.kim@corp.example';

describe.skipIf(postgres.skipReason)(
  `lock order of approvals and their announcements on postgres${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
    let store: ApprovalStores;

    beforeAll(async () => {
      testDb = await openTestDatabase(postgres);
      store = createApprovalStores(testDb.handle.db, testDb.handle.dialect);
    });
    afterAll(() => testDb?.close());
    beforeEach(() => testDb.clear());

    /**
     * Approvals whose approver's DM is claimed for delivery, and whose status check, claimed by a
     * pass, found the service handing them to someone else: the two writes about to race.
     */
    async function racing(count: number) {
      const numbers = Array.from({ length: count }, (_, i) => `LOCK${String(i).padStart(8, '0')}`);
      for (const djbh of numbers) await store.createApproval(approval(djbh), T0);
      const dms = (await store.pendingAnnouncements(count * 4)).filter(
        (a) => a.kind === 'approver-dm',
      );
      const checks = new Map(
        (await store.claimDue(later(2), count, 60_000)).map((a) => [a.approval.djbh, a]),
      );
      return Promise.all(
        dms.map(async (dm) => {
          const claim = await store.claimAnnouncement(dm, later(1), 60_000);
          const checked = checks.get(dm.djbh);
          if (!claim || !checked) throw new Error(`${dm.djbh} not claimed`);
          const handover = handoverOf(checked.approval, {
            decision: 'pending',
            unknown: false,
            ended: false,
            approver: NEW_APPROVER,
          });
          if (!handover) throw new Error('no handover');
          return {
            djbh: dm.djbh,
            deliver: () => store.markAnnouncementSent(claim, UNREACHABLE, later(3)),
            handOver: () =>
              store.recordHandover(
                dm.djbh,
                { ...handover, now: later(3), nextCheckAt: later(9) },
                checked.claim,
              ),
          };
        }),
      );
    }

    /**
     * Whichever went first, the approval is the new approver's, who is not marked unreachable (the
     * mark was the one before's), with the new approver's DM to send, and Maria's DM recorded as
     * delivered (it was: the delivery found her unreachable and told the requester).
     */
    async function expectConsistent(djbh: string) {
      expect(await store.getApproval(djbh)).toMatchObject({
        parties: { approver: { login: NEW_APPROVER, term: 1, unreachableSince: null } },
      });
      const rows = await testDb.handle.db
        .selectFrom('announcements')
        .select(['id', 'state'])
        .where('djbh', '=', djbh)
        .execute();
      const state = Object.fromEntries(rows.map((r) => [r.id, r.state]));
      expect(state[`${djbh}:approver-dm`], djbh).toBe('sent');
      expect(state[`${djbh}:approver-dm@1`], djbh).toBe('pending');
      expect(state[`${djbh}:handed-over:1`], djbh).toBe('pending');
    }

    it('lets a handover queued first and an unreachable approver’s delivery both finish, without a deadlock', async () => {
      const [race] = await racing(1);
      if (!race) throw new Error('nothing to race');
      // Someone else holds the approval's row, so both wait for it: the handover first in line,
      // then the delivery. When it is let go, the handover gets the row and goes on to the DM's
      // announcement; a delivery that took that announcement before waiting for the row would
      // now wait for the handover, which waits for it.
      await withHolderAndWatcher(testDb.url, async (holder, watcher) => {
        await holder.query('begin');
        await holder.query('select 1 from tracked_approvals where djbh = $1 for update', [
          race.djbh,
        ]);
        const handOver = race.handOver();
        await lockWaiters(watcher, 1);
        const deliver = race.deliver();
        await lockWaiters(watcher, 2);
        await holder.query('commit');
        const [handed, delivered] = await Promise.allSettled([handOver, deliver]);
        expect(handed).toEqual({ status: 'fulfilled', value: true });
        expect(delivered).toEqual({ status: 'fulfilled', value: true });
      });
      await expectConsistent(race.djbh);
    });

    it('runs handovers and unreachable approvers’ deliveries of the same approvals together, many times, with no deadlock', async () => {
      for (let round = 0; round < 5; round++) {
        await testDb.clear();
        const races = await racing(20);
        // Each pair at once, started in either order; all pairs together.
        const outcomes = await Promise.allSettled(
          races.flatMap((race, i) =>
            i % 2 === 0 ? [race.handOver(), race.deliver()] : [race.deliver(), race.handOver()],
          ),
        );
        const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
        expect(failures.map((e) => `${(e as { code?: string }).code}: ${e}`)).toEqual([]);
        expect(outcomes).toEqual(outcomes.map(() => ({ status: 'fulfilled', value: true })));
        for (const race of races) await expectConsistent(race.djbh);
      }
    });

    it('lets a link of an approver waiting on an approval and its Request again, and that request’s delivery, both finish, without a deadlock', async () => {
      const OLD = 'AGAIN0000001';
      const NEW = 'AGAIN0000002';
      // Maria waits on both: the request made again (NEW) of one nobody answered (OLD).
      await store.createApproval(approval(OLD), T0);
      await store.createApproval(
        approval(NEW, { request: { againOf: { djbh: OLD, link: null }, createdAt: later(1) } }),
        later(1),
      );
      const request = (await store.pendingAnnouncements(20)).find((a) => a.id === `${NEW}:request`);
      if (!request) throw new Error('no request announcement');
      const claim = await store.claimAnnouncement(request, later(2), 60_000);
      if (!claim) throw new Error('not claimed');
      const db = testDb.handle.db;
      // The delivery takes NEW's row, then its announcement, then OLD's row (its Request again
      // was posted: OLD's message links to it). Someone holds the announcement, so the delivery
      // waits there holding NEW's row, while the link takes the approvals waiting for Maria (read
      // by the index on her login in order of creation, OLD first, they were locked so).
      const outcomes = await withHolderAndWatcher(testDb.url, async (holder, watcher) => {
        await holder.query('begin');
        await holder.query('select 1 from announcements where id = $1 for update', [request.id]);
        const deliver = store.markAnnouncementSent(
          claim,
          { channel: 'C2147483705', ts: '9.1' },
          later(3),
        );
        await lockWaiters(watcher, 1);
        const link = createAccountLinkStore(db, testDb.handle.dialect).link({
          slackUserId: 'U0MARIAHOME',
          teamId: 'T0001',
          login: 'maria.lopez@corp.example',
          name: 'Maria',
          linkedAt: later(4),
        });
        await lockWaiters(watcher, 2);
        await holder.query('rollback');
        return Promise.allSettled([deliver, link]);
      });
      const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
      expect(failures.map((e) => `${(e as { code?: string }).code}: ${e}`)).toEqual([]);
      const old = await store.getApproval(OLD);
      expect(old?.request.requestedAgainAs).toMatchObject({ djbh: NEW });
    });

    it('lets a fast-check request for an approver and a link of that approver both finish, without a deadlock', async () => {
      const OLD = 'HOTLOCK00001';
      const NEW = 'HOTLOCK00002';
      // Maria waits on two approvals; NEW is the newer one.
      await store.createApproval(approval(OLD), T0);
      await store.createApproval(approval(NEW, { request: { createdAt: later(1) } }), later(1));
      await withHolderAndWatcher(testDb.url, async (holder, watcher) => {
        // Another replica links Maria: it locks what waits for her newest first (waitingForLogin)
        // and has NEW, about to take OLD.
        await holder.query('begin');
        await holder.query('select 1 from tracked_approvals where djbh = $1 for no key update', [
          NEW,
        ]);
        let settled = false;
        const hot = store
          .markHot('maria.lopez@corp.example', later(2), later(60), 10)
          .finally(() => {
            settled = true;
          });
        await Promise.race([hot, lockWaiters(watcher, 1, () => settled)]);
        // Taken in the other order, the fast-check request holds OLD and waits for NEW here.
        const linked = await holder
          .query('select 1 from tracked_approvals where djbh = $1 for no key update', [OLD])
          .then(
            () => 'locked',
            (e: { code?: string }) => e.code,
          );
        await holder.query(linked === 'locked' ? 'commit' : 'rollback');
        const marked = await hot.then(
          (n) => n,
          (e: { code?: string }) => e.code,
        );
        expect({ linked, marked }).toEqual({ linked: 'locked', marked: 2 });
      });
    });

    it('lets the purge pass over an ended approval someone is changing, instead of deadlocking with them', async () => {
      const djbh = 'ENDED0000001';
      await store.createApproval(approval(djbh), T0);
      const db = testDb.handle.db;
      await db
        .updateTable('tracked_approvals')
        .set({ tracking: 'finished', updated_at: T0.getTime() })
        .execute();
      await db.updateTable('announcements').set({ state: 'sent' }).execute();
      const purge = () =>
        createRetentionStore(db, testDb.handle.dialect).deleteEndedApprovals(later(1), 10);
      // Someone changes the approval as everyone does: its row, then its announcements. (A
      // request again of it, an operator's fix.)
      await withHolderAndWatcher(testDb.url, async (holder, watcher) => {
        await holder.query('begin');
        await holder.query('update tracked_approvals set updated_at = updated_at where djbh = $1', [
          djbh,
        ]);
        // A purge that took the announcements first would wait here for the row.
        let settled = false;
        const purged = purge().finally(() => {
          settled = true;
        });
        await Promise.race([purged, lockWaiters(watcher, 1, () => settled)]);
        await holder.query('update announcements set last_error = null where djbh = $1', [djbh]);
        await holder.query('commit');
        expect(await purged).toEqual({ approvals: 0, announcements: 0 });
      });
      // Taken at the next purge.
      expect(await purge()).toEqual({ approvals: 1, announcements: 2 });
    });
  },
);
