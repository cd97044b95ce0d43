import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { createReminderPosts, type ReminderPosts } from '../../src/store/reminder-post-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { approval, later, pendingOf, T0 } from '../helpers/store-fixtures.ts';

const HOUR = 3_600_000;

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `the last reminder posted to an approver, on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
      let store: ApprovalStores;
      let posts: ReminderPosts;

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
        store = createApprovalStores(testDb.handle.db, testDb.handle.dialect);
        posts = createReminderPosts(testDb.handle.db);
      });
      afterAll(() => testDb?.close());
      beforeEach(() => testDb.clear());

      /** Records a reminder of `djbh` and delivers it at `at` as `posted`. */
      async function remind(djbh: string, at: Date, posted: { channel: string; ts: string }) {
        await store.recordReminder(djbh, 1, at);
        const reminder = (await store.pendingAnnouncements(100)).find(
          (a) => a.djbh === djbh && a.kind === 'reminder',
        );
        if (!reminder) throw new Error('no reminder');
        const claim = await store.claimAnnouncement(reminder, at, 30_000);
        if (!claim) throw new Error('no claim');
        await store.markAnnouncementSent(claim, posted, at);
      }

      it('finds the digest by when its first reminder posted it, not when the ones it covered were recorded', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.createApproval(approval('AAAAAAAAAAAb'), T0);
        await store.createApproval(
          approval('BBBBBBBBBBBa', { parties: { approver: { login: 'other@corp.example' } } }),
          T0,
        );
        expect(await posts.lastReminderPost('maria.lopez@corp.example')).toBeUndefined();
        const digest = { channel: 'D0MARIA', ts: '1700000000.000100' };
        await remind('AAAAAAAAAAAa', later(HOUR), digest);
        // Covered by the digest, recorded as delivered by it an hour later.
        await remind('AAAAAAAAAAAb', later(2 * HOUR), digest);
        // Another approver's reminder is not hers.
        await remind('BBBBBBBBBBBa', later(3 * HOUR), { channel: 'D0OTHER', ts: '1700000001.0' });
        expect(await posts.lastReminderPost('maria.lopez@corp.example')).toEqual({
          ...digest,
          at: later(HOUR),
        });
        // Nothing posted (no ts) is not a reminder she read.
        await store.createApproval(approval('AAAAAAAAAAAc'), T0);
        await remind('AAAAAAAAAAAc', later(4 * HOUR), { channel: '', ts: '' });
        expect((await posts.lastReminderPost('maria.lopez@corp.example'))?.ts).toBe(digest.ts);
        expect(await pendingOf(store, 'reminder-note')).toBeDefined();
      });

      it('finds her reminders however the service cased her login on each approval', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await store.createApproval(
          approval('AAAAAAAAAAAb', {
            parties: { approver: { login: 'Maria.Lopez@Corp.Example' } },
          }),
          T0,
        );
        const digest = { channel: 'D0MARIA', ts: '1700000000.000100' };
        await remind('AAAAAAAAAAAa', later(HOUR), digest);
        expect(await posts.lastReminderPost('Maria.Lopez@Corp.Example')).toEqual({
          ...digest,
          at: later(HOUR),
        });
      });

      it('does not count a reminder posted to the approver before a handover as the new one’s', async () => {
        await store.createApproval(approval('AAAAAAAAAAAa'), T0);
        await remind('AAAAAAAAAAAa', later(HOUR), { channel: 'D0MARIA', ts: '1700000000.000100' });
        const [claimed] = await store.claimDue(later(2 * HOUR), 10, 30_000);
        const to = { login: 'alex.kim@corp.example', chatId: null };
        const handover = { fromTerm: 0, to, former: [], now: later(2 * HOUR) };
        expect(
          await store.recordHandover(
            'AAAAAAAAAAAa',
            { ...handover, nextCheckAt: later(3 * HOUR) },
            claimed?.claim,
          ),
        ).toBe(true);
        // Alex was never reminded: his first reminder is not covered by Maria's DM.
        expect(await posts.lastReminderPost('alex.kim@corp.example')).toBeUndefined();
        await remind('AAAAAAAAAAAa', later(4 * HOUR), { channel: 'D0ALEX', ts: '1700000009.0' });
        expect((await posts.lastReminderPost('alex.kim@corp.example'))?.channel).toBe('D0ALEX');
      });

      /** Claims the pending announcement `id` at `at` and records it posted as `posted`. */
      async function deliver(id: string, at: Date, posted: { channel: string; ts: string }) {
        const found = (await store.pendingAnnouncements(100)).find((a) => a.id === id);
        const claim = found && (await store.claimAnnouncement(found, at, 30_000));
        if (!claim) throw new Error(`could not claim ${id}`);
        await store.markAnnouncementSent(claim, posted, at);
      }

      it('finds a leader’s escalation digest by when its first escalation posted it, and only theirs', async () => {
        const LEADER = { login: 'chen.hao@corp.example', chatId: 'U0CHEN' };
        for (const djbh of ['AAAAAAAAAAAa', 'AAAAAAAAAAAb']) {
          await store.createApproval(approval(djbh), T0);
          for (const n of [1, 2]) {
            await store.recordReminder(djbh, n, later(n * HOUR));
            await deliver(`${djbh}:reminder:${n}`, later(n * HOUR), {
              channel: 'D0MARIA',
              ts: `170000000${n}.0001`,
            });
          }
          const escalated = await store.recordEscalation(djbh, {
            to: LEADER,
            afterReminders: 2,
            answerWithinMs: 0,
            now: later(3 * HOUR),
          });
          expect(escalated).toBe(true);
        }
        expect(await posts.lastEscalationPost(LEADER.login)).toBeUndefined();
        const digest = { channel: 'D0CHEN', ts: '1700000009.000100' };
        await deliver('AAAAAAAAAAAa:escalation:2', later(4 * HOUR), digest);
        // Covered by the digest, recorded as delivered by it an hour later.
        await deliver('AAAAAAAAAAAb:escalation:2', later(5 * HOUR), digest);
        expect(await posts.lastEscalationPost('Chen.Hao@Corp.Example')).toEqual({
          ...digest,
          at: later(4 * HOUR),
        });
        // The approver's reminders are not escalations, and another leader had none.
        expect(await posts.lastEscalationPost('maria.lopez@corp.example')).toBeUndefined();
        expect(await posts.lastEscalationPost('zhou.lan@corp.example')).toBeUndefined();
      });

      it('knows when an escalation to a leader attempted earlier may have been posted unbeknown, only until it is settled', async () => {
        const LEADER = { login: 'chen.hao@corp.example', chatId: 'U0CHEN' };
        for (const djbh of ['AAAAAAAAAAAa', 'AAAAAAAAAAAb']) {
          await store.createApproval(approval(djbh), T0);
          for (const n of [1, 2]) {
            await store.recordReminder(djbh, n, later(n * HOUR));
            await deliver(`${djbh}:reminder:${n}`, later(n * HOUR), {
              channel: 'D0MARIA',
              ts: `170000000${n}.0001`,
            });
          }
          await store.recordEscalation(djbh, {
            to: LEADER,
            afterReminders: 2,
            answerWithinMs: 0,
            now: later(3 * HOUR),
          });
        }
        const pending = async (id: string) => {
          const found = (await store.pendingAnnouncements(100)).find((a) => a.id === id);
          if (!found) throw new Error(`no ${id}`);
          return found;
        };
        const a = 'AAAAAAAAAAAa:escalation:2';
        const b = 'AAAAAAAAAAAb:escalation:2';
        expect(await posts.escalationMayBePosted('Chen.Hao@Corp.Example', await pending(b))).toBe(
          false,
        );
        // The first one's post was answered 5xx: Slack may have taken it.
        const claim = await store.claimAnnouncement(await pending(a), later(4 * HOUR), 30_000);
        if (!claim) throw new Error('no claim');
        await store.markAnnouncementRetry(claim, {
          error: 'HTTP 503',
          uncertain: true,
          nextAttemptAt: later(4 * HOUR),
        });
        expect(await posts.escalationMayBePosted('Chen.Hao@Corp.Example', await pending(b))).toBe(
          true,
        );
        // Not for itself, nor for another leader.
        expect(await posts.escalationMayBePosted(LEADER.login, await pending(a))).toBe(false);
        expect(await posts.escalationMayBePosted('zhou.lan@corp.example', await pending(b))).toBe(
          false,
        );
        // Whatever time the dispatcher's clock gave the attempts: b attempted "earlier" still
        // waits for a's lost answer (under load a fill's clock is older than an attempt before it).
        await sql`update announcements set first_attempted_at = ${later(2 * HOUR).getTime()} where id = ${b}`.execute(
          testDb.handle.db,
        );
        expect(await posts.escalationMayBePosted(LEADER.login, await pending(b))).toBe(true);
        // Two in flight never wait for each other: only the one later in id order waits.
        const inFlight = await store.claimAnnouncement(await pending(b), later(4 * HOUR), 30_000);
        if (!inFlight) throw new Error('no claim of b');
        expect(await posts.escalationMayBePosted(LEADER.login, await pending(a))).toBe(false);
        await store.markAnnouncementRetry(inFlight, {
          error: 'waiting',
          uncertain: false,
          nextAttemptAt: later(4 * HOUR),
        });
        // Settled: found and recorded.
        await deliver(a, later(5 * HOUR), { channel: 'D0CHEN', ts: '1700000009.000100' });
        expect(await posts.escalationMayBePosted(LEADER.login, await pending(b))).toBe(false);
      });
    },
  );
}
