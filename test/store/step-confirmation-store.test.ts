import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type {
  NewStepConfirmation,
  StepConfirmations,
} from '../../src/approvals/step-confirmation.ts';
import { shownDigest } from '../../src/approvals/step-confirmation.ts';
import { createApprovalStores } from '../../src/store/approval-stores.ts';
import { createStepConfirmationStore } from '../../src/store/step-confirmation-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';

const T0 = new Date('2026-11-23T10:00:00Z');
const later = (ms: number) => new Date(T0.getTime() + ms);
const HOUR = 3_600_000;

function confirmation(executionId: string): NewStepConfirmation {
  return {
    executionId,
    teamId: 'T0001',
    requesterChatId: 'U0SAM',
    startedByChatId: 'U0PRIYA',
    approverChatId: null,
    title: '人事 review',
    note: 'Effective at month end.',
    shownDigest: shownDigest('人事 review', 'Effective at month end.'),
    channelId: 'C0GENERAL',
    locale: 'zh-CN',
    createdAt: T0,
    expiresAt: later(HOUR),
  };
}

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `step confirmations on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
      let store: StepConfirmations;

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
        store = createStepConfirmationStore(testDb.handle.db);
      });
      afterAll(async () => {
        await testDb.close();
      });
      beforeEach(async () => {
        await testDb.clear();
      });

      it('reads back what was asked, and where', async () => {
        await store.create(confirmation('Fx1'));
        await store.recordAsked('Fx1', { channel: 'D0SAM', ts: '1.000100' });
        expect(await store.get('Fx1')).toEqual({
          ...confirmation('Fx1'),
          state: 'pending',
          reason: null,
          askedIn: { channel: 'D0SAM', ts: '1.000100' },
          stepClosed: false,
        });
      });

      it('lets exactly one of many simultaneous answers through', async () => {
        await store.create(confirmation('Fx1'));
        const answers = await Promise.all([
          store.answer('Fx1', 'starting', later(1000)),
          store.answer('Fx1', 'starting', later(1000)),
          store.answer('Fx1', 'declined', later(1000), 'no'),
          store.answer('Fx1', 'starting', later(1000)),
        ]);
        expect(answers.filter(Boolean)).toHaveLength(1);
      });

      it('takes no answer past its time, and expires it once with its reason', async () => {
        await store.create(confirmation('Fx1'));
        await store.create(confirmation('Fx2'));
        expect(await store.answer('Fx1', 'starting', later(HOUR))).toBe(false);
        expect(await store.expire(later(HOUR - 1), () => 'late')).toEqual([]);
        const expired = await store.expire(later(HOUR), (c) => `late ${c.executionId}`);
        expect(expired.map((c) => [c.executionId, c.state, c.reason]).sort()).toEqual([
          ['Fx1', 'expired', 'late Fx1'],
          ['Fx2', 'expired', 'late Fx2'],
        ]);
        expect(await store.expire(later(2 * HOUR), () => 'again')).toEqual([]);
      });

      it('owes the step its error until it is marked closed; a started one owes nothing', async () => {
        await store.create(confirmation('Fx1'));
        await store.create(confirmation('Fx2'));
        await store.create(confirmation('Fx3'));
        await store.answer('Fx1', 'declined', T0, 'declined');
        await store.answer('Fx2', 'starting', T0);
        await store.settle('Fx2', 'started');
        await store.answer('Fx3', 'starting', T0);
        await store.settle('Fx3', 'failed', 'service down');
        expect((await store.unclosed(10)).map((c) => [c.executionId, c.reason]).sort()).toEqual([
          ['Fx1', 'declined'],
          ['Fx3', 'service down'],
        ]);
        await store.markClosed('Fx1');
        expect((await store.unclosed(10)).map((c) => c.executionId)).toEqual(['Fx3']);
      });

      it('settles a Start left under way by a crash: started when its approval exists, else failed and owed', async () => {
        for (const id of ['Fx1', 'Fx2', 'Fx3']) await store.create(confirmation(id));
        await store.answer('Fx1', 'starting', later(1000));
        await store.answer('Fx2', 'starting', later(1000));
        // Fx3's Start is recent: still under way, not stuck.
        await store.answer('Fx3', 'starting', later(10 * 60_000));
        await createApprovalStores(testDb.handle.db, testDb.handle.dialect).createApproval(
          {
            djbh: 'STEPxxxxxxxa',
            teamId: 'T0001',
            slack: { channelId: 'C0GENERAL', functionExecutionId: 'Fx1' },
            parties: {
              requester: { slackId: 'U0SAM', login: 'sam@corp.example' },
              approver: { login: 'maria@corp.example', slackId: null },
            },
            request: { title: 't', note: 'n', locale: 'en-US', createdAt: later(1000) },
          },
          later(1000),
        );
        // Nothing is stuck before its time.
        expect(await store.recoverStarting(later(999), () => 'x')).toEqual({
          started: [],
          failed: [],
        });
        const recovered = await store.recoverStarting(
          later(5 * 60_000),
          (c) => `lost ${c.executionId}`,
        );
        expect(recovered.started.map((c) => c.executionId)).toEqual(['Fx1']);
        expect(recovered.failed.map((c) => [c.executionId, c.state, c.reason])).toEqual([
          ['Fx2', 'failed', 'lost Fx2'],
        ]);
        expect((await store.get('Fx1'))?.state).toBe('started');
        expect((await store.get('Fx3'))?.state).toBe('starting');
        expect((await store.unclosed(10)).map((c) => c.executionId)).toEqual(['Fx2']);
        // Settled once: another replica's sweep finds nothing more.
        expect(await store.recoverStarting(later(5 * 60_000), () => 'again')).toEqual({
          started: [],
          failed: [],
        });
      });

      it('hands a deferred Start to one claimer, never expiring it meanwhile', async () => {
        await store.create(confirmation('Fx1'));
        await store.create(confirmation('Fx2'));
        await store.answer('Fx1', 'starting', later(1000));
        await store.defer('Fx1');
        // Only a Start under way is deferred.
        await store.defer('Fx2');
        expect((await store.get('Fx2'))?.state).toBe('pending');
        expect(await store.expire(later(2 * HOUR), () => 'gone')).toHaveLength(1);
        expect((await store.get('Fx1'))?.state).toBe('confirmed');
        const [a, b] = await Promise.all([
          store.claimConfirmed(later(2 * HOUR), 10),
          store.claimConfirmed(later(2 * HOUR), 10),
        ]);
        expect([...(a ?? []), ...(b ?? [])].map((c) => [c.executionId, c.state])).toEqual([
          ['Fx1', 'starting'],
        ]);
        // Claimed just now: not yet taken for one a crash interrupted.
        expect(await store.recoverStarting(later(2 * HOUR - 1), () => 'x')).toEqual({
          started: [],
          failed: [],
        });
      });
    },
  );
}
