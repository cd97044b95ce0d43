import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type {
  NewStepConfirmation,
  StepConfirmations,
} from '../../src/approvals/step-confirmation.ts';
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
    },
  );
}
