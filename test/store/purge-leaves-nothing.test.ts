import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpired } from '../../src/approvals/retention.ts';
import { shownDigest } from '../../src/approvals/step-confirmation.ts';
import { stepSubmissionKey } from '../../src/approvals/submission-guard.ts';
import { createApprovalStores } from '../../src/store/approval-stores.ts';
import { createRetentionStore } from '../../src/store/retention-store.ts';
import { createStepConfirmationStore } from '../../src/store/step-confirmation-store.ts';
import { createSubmissionGuard } from '../../src/store/submission-guard-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { findInEveryTable } from '../helpers/every-table.ts';

// Retention deletes an approval: nothing of it may stay anywhere. Every table the schema has
// (listed from the database itself, so a table added later is scanned too) is searched for the
// approval's number and its people's Slack ids and logins after the purge.

const DAY = 24 * 3_600_000;
const T0 = new Date('2026-11-20T09:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const DJBH = 'PURGE0000001';
const EXECUTION = 'Fx0PURGEEXEC1';
const PEOPLE = {
  requester: { chatId: 'U0PURGESAM', login: 'sam.purge@corp.example' },
  approver: { chatId: 'U0PURGEMARIA', login: 'maria.purge@corp.example' },
  leader: { chatId: 'U0PURGECHEN', login: 'chen.purge@corp.example' },
  starter: { chatId: 'U0PURGEPRIYA', login: null },
};
/** What must not be found anywhere after the purge, compared without case. */
const NEEDLES = [
  DJBH,
  EXECUTION,
  ...Object.values(PEOPLE).flatMap((p) => [p.chatId, ...(p.login ? [p.login] : [])]),
].map((n) => n.toLowerCase());

for (const which of TEST_DATABASES) {
  describe.skipIf(which.skipReason)(`a purge on ${which.name}`, () => {
    let database: Awaited<ReturnType<typeof openTestDatabase>>;
    beforeAll(async () => {
      database = await openTestDatabase(which);
    });
    afterAll(() => database?.close());

    /** Every table of the schema, and the needles found in each of its rows. */
    async function scan(): Promise<string[]> {
      const { tables, found } = await findInEveryTable(database.handle.db, NEEDLES);
      expect(tables).toContain('lane_leases');
      return found;
    }

    it('leaves no row in any table that names the approval or its people', async () => {
      const { db, dialect } = database.handle;
      const store = createApprovalStores(db, dialect);
      const confirmations = createStepConfirmationStore(db);
      // A workflow run: its replay key, the requester's confirmation, then the approval it starts.
      expect(await createSubmissionGuard(db).take(stepSubmissionKey(EXECUTION), T0)).toBe(true);
      await confirmations.create({
        executionId: EXECUTION,
        teamId: 'T0001',
        requesterChatId: PEOPLE.requester.chatId,
        startedByChatId: PEOPLE.starter.chatId,
        approverChatId: PEOPLE.approver.chatId,
        title: 'Purge me',
        note: 'Termination of J. Doe',
        channelId: 'C0GENERAL',
        locale: 'en-US',
        createdAt: T0,
        expiresAt: at(DAY),
        shownDigest: shownDigest('Purge me', 'Termination of J. Doe'),
      });
      expect(await confirmations.answer(EXECUTION, 'starting', at(1000))).toBe(true);
      await confirmations.settle(EXECUTION, 'started');
      await store.createApproval(
        {
          djbh: DJBH,
          teamId: 'T0001',
          slack: { channelId: 'C0GENERAL', functionExecutionId: EXECUTION },
          parties: {
            requester: { slackId: PEOPLE.requester.chatId, login: PEOPLE.requester.login },
            // Not found on Slack when it was asked: its DM lane is named by login.
            approver: { login: PEOPLE.approver.login, slackId: null },
          },
          request: {
            title: 'Purge me',
            note: 'Termination of J. Doe',
            locale: 'en-US',
            createdAt: at(2000),
          },
        },
        at(2000),
      );

      /** Delivers everything deliverable, each in its lane, as the dispatcher would. */
      let posts = 0;
      async function deliverAll(now: Date): Promise<void> {
        for (;;) {
          const ready = await store.deliverable(now, { limit: 10, skipLanes: [] });
          if (ready.length === 0) return;
          for (const { announcement, lane } of ready) {
            const claim = await store.claimAnnouncement(announcement, now, 30_000, lane);
            if (!claim) continue;
            posts++;
            const channel = lane.startsWith('dm:') ? `D0DM${posts}` : 'C0GENERAL';
            await store.markAnnouncementSent(claim, { channel, ts: `1700000000.${posts}` }, now);
          }
        }
      }
      await deliverAll(at(3000));
      await store.recordReminder(DJBH, 1, at(DAY));
      await store.recordEscalation(DJBH, {
        to: PEOPLE.leader,
        afterReminders: 0,
        answerWithinMs: 0,
        now: at(DAY + 1000),
      });
      await deliverAll(at(DAY + 2000));
      await store.recordDecision(DJBH, {
        decision: 'approved',
        decidedBy: PEOPLE.approver.login,
        ended: true,
        now: at(DAY + 3000),
        nextCheckAt: at(DAY + 3000),
      });
      await deliverAll(at(DAY + 4000));
      expect(await store.pendingAnnouncements(10)).toEqual([]);
      // The lanes it took, among what names it before the purge.
      const lanes = (await db.selectFrom('lane_leases').select('lane').execute()).map(
        (r) => r.lane,
      );
      expect(lanes).toEqual(
        expect.arrayContaining([
          `own:${DJBH}`,
          `dm:login:${PEOPLE.leader.login}`,
          `dm:login:${PEOPLE.approver.login}`,
        ]),
      );
      expect((await scan()).length).toBeGreaterThan(0);

      const counts = await purgeExpired(
        createRetentionStore(db, dialect),
        { retentionDays: 30 },
        at(40 * DAY),
      );
      expect(counts?.approvals).toBe(1);
      expect(await scan()).toEqual([]);
    });
  });
}
