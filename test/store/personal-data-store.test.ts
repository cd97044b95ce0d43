import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erasePerson, exportPerson, type PersonalData } from '../../src/approvals/personal-data.ts';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { createApprovalStores } from '../../src/store/approval-stores.ts';
import { createDelegationStore } from '../../src/store/delegation-store.ts';
import { createPersonalDataStore } from '../../src/store/personal-data-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { seedReported } from '../helpers/report-seed.ts';

// An erase that stops half way (the process killed, the database gone for a moment) is finished
// by running it again with the same words: whatever was erased first must not be what told the
// app who the person is.

const ERIN = { chatId: 'U0CRASHERIN', login: 'erin.crash@corp.example' };
const T0 = new Date('2026-11-02T09:00:00Z');

for (const which of TEST_DATABASES) {
  describe.skipIf(which.skipReason)(`an interrupted erase on ${which.name}`, () => {
    let database: Awaited<ReturnType<typeof openTestDatabase>>;
    let data: PersonalData;
    beforeAll(async () => {
      database = await openTestDatabase(which);
      const { db, dialect } = database.handle;
      const store = createApprovalStores(db, dialect);
      await createAccountLinkStore(db, dialect).link({
        slackUserId: ERIN.chatId,
        login: ERIN.login,
        name: 'ERIN',
        teamId: 'T1',
        linkedAt: T0,
      });
      // Her Slack id and login are only named together by the link (the approval ended long ago
      // and was asked before she linked: it knows her login alone).
      await seedReported(
        store,
        'CRS000000001',
        {
          request: { createdAt: T0 },
          parties: { requester: { slackId: 'U0OLD', login: ERIN.login } },
        },
        {
          decided: {
            decision: 'approved',
            by: 'maria@corp.example',
            seenAt: new Date(T0.getTime() + 3_600_000),
          },
        },
      );
      await createDelegationStore(db).set({
        from: ERIN.login,
        to: 'maria@corp.example',
        until: new Date(T0.getTime() + 86_400_000),
        setAt: T0,
      });
      data = createPersonalDataStore(db, dialect);
    }, 60_000);
    afterAll(() => database?.close());

    it('is finished by erasing again by her Slack id', async () => {
      const failing = {
        ...data,
        sections: data.sections.map((s) =>
          s.name === 'delegations'
            ? {
                ...s,
                erase: async () => {
                  throw new Error('killed');
                },
              }
            : s,
        ),
      };
      await expect(erasePerson(failing, ERIN.chatId, 'erased-first')).rejects.toThrow('killed');
      await erasePerson(data, ERIN.chatId, 'erased-again');
      const left = await exportPerson(data, ERIN.login);
      expect(left.sections.delegations).toEqual([]);
      expect(left.sections['account links']).toEqual([]);
    });
  });
}
