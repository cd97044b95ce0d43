import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { later, T0 } from '../helpers/store-fixtures.ts';

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `account links on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
      });
      afterAll(() => testDb?.close());
      beforeEach(() => testDb.clear());

      it('links a Slack user to a service login, replaces and removes the link', async () => {
        const links = createAccountLinkStore(testDb.handle.db, testDb.handle.dialect);
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

      it('finds a link by the login person.ts calls the same, and never by a look-alike', async () => {
        // Postgres's lower() folds U+212A (Kelvin sign) to `k`; person.ts holds it to be another
        // login, as the service does: the link of kate@ is not the link of \u212Aate@.
        const links = createAccountLinkStore(testDb.handle.db, testDb.handle.dialect);
        await testDb.handle.db.deleteFrom('linked_accounts').execute();
        await links.link({
          slackUserId: 'U1',
          teamId: 'T1',
          login: 'kate@corp.example',
          name: 'KATE',
          linkedAt: T0,
        });
        expect((await links.findByLogin('KATE@corp.example'))?.slackUserId).toBe('U1');
        expect(await links.findByLogin('\u212Aate@corp.example')).toBeUndefined();
        expect(await links.findByLogin('\u212AATE@corp.example')).toBeUndefined();
      });

      it('links one login to one Slack user: another user’s link to it is refused, naming the holder', async () => {
        const links = createAccountLinkStore(testDb.handle.db, testDb.handle.dialect);
        await testDb.handle.db.deleteFrom('linked_accounts').execute();
        const alice = { slackUserId: 'U1', teamId: 'T1', name: 'ALICE', linkedAt: T0 };
        expect(await links.link({ ...alice, login: 'alice@corp.example' })).toEqual({
          linked: true,
        });
        const refused = await links.link({
          slackUserId: 'U2',
          teamId: 'T1',
          login: 'ALICE@corp.example',
          name: 'ALICE',
          linkedAt: later(1),
        });
        expect(refused).toEqual({
          linked: false,
          takenBy: { ...alice, login: 'alice@corp.example' },
        });
        expect(await links.get('U2')).toBeUndefined();
        // The holder may relink to the same login; once it lets go, the login is free.
        expect((await links.link({ ...alice, login: 'Alice@corp.example' })).linked).toBe(true);
        await links.unlink('U1');
        expect(
          (
            await links.link({
              slackUserId: 'U2',
              teamId: 'T1',
              login: 'alice@corp.example',
              name: 'ALICE',
              linkedAt: later(2),
            })
          ).linked,
        ).toBe(true);
      });

      it('lists every link by Slack user id, for the operator', async () => {
        const links = createAccountLinkStore(testDb.handle.db, testDb.handle.dialect);
        await testDb.handle.db.deleteFrom('linked_accounts').execute();
        for (const [id, login] of [
          ['U2', 'bob@corp.example'],
          ['U1', 'alice@corp.example'],
        ] as const)
          await links.link({ slackUserId: id, teamId: '', login, name: 'X', linkedAt: T0 });
        expect((await links.list()).map((a) => [a.slackUserId, a.login])).toEqual([
          ['U1', 'alice@corp.example'],
          ['U2', 'bob@corp.example'],
        ]);
      });
    },
  );
}
