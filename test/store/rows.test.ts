import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { approval, later, stored, T0 } from '../helpers/store-fixtures.ts';

// Rows <-> domain (store/rows.ts), through the real databases: every column of an approval's row
// reaches its place in the groups or the schedule, and what starting writes reads back as given.
// Exact (toEqual), so that a column read into the wrong field, or not at all, shows.
for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `approval rows on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
      let store: ApprovalStores;

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
        store = createApprovalStores(testDb.handle.db, testDb.handle.dialect);
      });
      afterAll(() => testDb?.close());
      beforeEach(() => testDb.clear());

      it('reads back what starting wrote, with everything else empty', async () => {
        await store.createApproval(
          approval('ROWSTART000a', {
            request: {
              template: { id: 'tpl-1', name: 'Purchase' },
              againOf: { djbh: 'EARLIER0000a', link: 'https://slack.example/p1' },
            },
            slack: { threadTs: '1700000000.000001', functionExecutionId: 'Fx1' },
          }),
          later(7),
        );
        expect(await stored(testDb.handle.db, 'ROWSTART000a')).toEqual({
          approval: {
            djbh: 'ROWSTART000a',
            teamId: 'T0001',
            request: {
              title: '扩容 storage',
              note: 'For Q3',
              locale: 'zh-CN',
              createdAt: T0,
              template: { id: 'tpl-1', name: 'Purchase' },
              againOf: { djbh: 'EARLIER0000a', link: 'https://slack.example/p1' },
              requestedAgainAs: null,
            },
            parties: {
              requester: { login: 'li.wei@corp.example', slackId: 'U2147483697' },
              approver: {
                login: 'maria.lopez@corp.example',
                slackId: 'U0MARIA',
                term: 0,
                since: null,
                unreachableSince: null,
              },
              formerApprovers: [],
            },
            outcome: {
              decision: 'pending',
              decidedBy: null,
              tracking: 'active',
              unknownSince: null,
              changedAt: later(7),
            },
            followUp: {
              remindersSent: 0,
              lastRemindedAt: null,
              escalatedAt: null,
              escalatedTo: null,
            },
            slack: {
              channelId: 'C2147483705',
              messageTs: null,
              threadTs: '1700000000.000001',
              functionExecutionId: 'Fx1',
            },
          },
          schedule: {
            nextCheckAt: later(7),
            lastCheckedAt: null,
            checkFailures: 0,
            hotUntil: null,
          },
        });
      });

      it('puts every column of a row that lived a while in its place', async () => {
        await store.createApproval(approval('ROWFULL0000a'), T0);
        const former = [
          { login: 'liu.yang@corp.example', chatId: 'U0LIU' },
          { login: 'gone@corp.example', chatId: null },
        ];
        await testDb.handle.db
          .updateTable('tracked_approvals')
          .set({
            message_ts: '1700000000.000100',
            requested_again_as: 'AGAIN000000a',
            requested_again_channel: 'C0OTHER',
            requested_again_ts: '1700000000.000200',
            approver_login: 'alex.kim@corp.example',
            approver_slack_id: 'U0ALEX',
            approver_term: 2,
            approver_since: later(11).getTime(),
            approver_unreachable_since: later(12).getTime(),
            former_approvers: JSON.stringify(former),
            decision: 'rejected',
            decided_by: 'alex.kim@corp.example',
            tracking: 'finished',
            unknown_since: later(13).getTime(),
            updated_at: later(14).getTime(),
            reminders_sent: 3,
            last_reminded_at: later(15).getTime(),
            escalated_at: later(16).getTime(),
            escalated_to_login: 'lee.boss@corp.example',
            escalated_to_slack_id: 'U0LEE',
            next_check_at: later(17).getTime(),
            last_checked_at: later(18).getTime(),
            check_failures: 4,
            hot_until: later(19).getTime(),
          })
          .where('djbh', '=', 'ROWFULL0000a')
          .execute();
        const found = await stored(testDb.handle.db, 'ROWFULL0000a');
        expect(found?.approval.request.requestedAgainAs).toEqual({
          djbh: 'AGAIN000000a',
          message: { channelId: 'C0OTHER', ts: '1700000000.000200' },
        });
        expect(found?.approval.parties).toEqual({
          requester: { login: 'li.wei@corp.example', slackId: 'U2147483697' },
          approver: {
            login: 'alex.kim@corp.example',
            slackId: 'U0ALEX',
            term: 2,
            since: later(11),
            unreachableSince: later(12),
          },
          formerApprovers: former,
        });
        expect(found?.approval.outcome).toEqual({
          decision: 'rejected',
          decidedBy: 'alex.kim@corp.example',
          tracking: 'finished',
          unknownSince: later(13),
          changedAt: later(14),
        });
        expect(found?.approval.followUp).toEqual({
          remindersSent: 3,
          lastRemindedAt: later(15),
          escalatedAt: later(16),
          escalatedTo: { login: 'lee.boss@corp.example', chatId: 'U0LEE' },
        });
        expect(found?.approval.slack.messageTs).toBe('1700000000.000100');
        expect(found?.schedule).toEqual({
          nextCheckAt: later(17),
          lastCheckedAt: later(18),
          checkFailures: 4,
          hotUntil: later(19),
        });
      });

      it('keeps a template recorded by name only, and a request again not posted yet', async () => {
        await store.createApproval(
          approval('ROWNAME0000a', { request: { template: { id: null, name: 'Purchase' } } }),
          T0,
        );
        await testDb.handle.db
          .updateTable('tracked_approvals')
          .set({ requested_again_as: 'AGAIN000000b' })
          .where('djbh', '=', 'ROWNAME0000a')
          .execute();
        const found = await stored(testDb.handle.db, 'ROWNAME0000a');
        expect(found?.approval.request.template).toEqual({ id: null, name: 'Purchase' });
        expect(found?.approval.request.againOf).toBeNull();
        expect(found?.approval.request.requestedAgainAs).toEqual({
          djbh: 'AGAIN000000b',
          message: null,
        });
      });
    },
  );
}
