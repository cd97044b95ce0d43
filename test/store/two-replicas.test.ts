import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { lockWaiters, withHolderAndWatcher } from '../helpers/postgres-locks.ts';
import { approval, later, T0 } from '../helpers/store-fixtures.ts';

// Events recorded by one replica while another changes the same approval: each transition must
// be decided on the approval as it is once its row is held, not as it was read before another
// replica's change committed (Postgres reads without waiting; only SQLite's one writer makes the
// question moot, so only Postgres runs here).

const postgres = TEST_DATABASES.find((d) => d.name === 'postgres');
if (!postgres) throw new Error('no Postgres in TEST_DATABASES');
const DJBH = 'AAAAAAAAAAAa';
const MARIA = 'maria.lopez@corp.example';

describe.skipIf(postgres.skipReason)(
  `two replicas changing one approval on postgres${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
    let store: ApprovalStores;

    beforeAll(async () => {
      testDb = await openTestDatabase(postgres);
      store = createApprovalStores(testDb.handle.db, testDb.handle.dialect);
    });
    afterAll(() => testDb?.close());
    beforeEach(() => testDb.clear());

    /** Runs `sql` in a transaction of another replica that commits while `during` waits for it. */
    function whileAnotherReplicaCommits<T>(sql: string, during: () => Promise<T>): Promise<T> {
      return withHolderAndWatcher(testDb.url, async (other, watcher) => {
        await other.query('begin');
        await other.query(sql, [DJBH]);
        const waiting = during();
        await lockWaiters(watcher, 1);
        await other.query('commit');
        return await waiting;
      });
    }

    const link = () =>
      createAccountLinkStore(testDb.handle.db, testDb.handle.dialect).link({
        slackUserId: 'U0MARIAHOME',
        teamId: 'T1',
        login: MARIA,
        name: 'MARIA',
        linkedAt: later(5000),
      });

    it('clears the unreachable mark another replica committed while the approver’s login was being linked', async () => {
      await store.createApproval(approval(DJBH), T0);
      // A delivery on another replica finds Maria unreachable and records it as she links.
      await whileAnotherReplicaCommits(
        `update tracked_approvals set approver_unreachable_since = ${later(1000).getTime()} where djbh = $1`,
        link,
      );
      // She is linked: reachable again, and the request message drops its Request again.
      expect(await store.getApproval(DJBH)).toMatchObject({
        parties: { approver: { unreachableSince: null, slackId: 'U0MARIAHOME' } },
      });
      expect((await store.pendingAnnouncements(100)).map((a) => a.id)).toContain(
        `${DJBH}:parent-update:approver-linked-${later(5000).getTime()}`,
      );
    });

    it('does not announce a link again when another replica’s link made the approver reachable first', async () => {
      await store.createApproval(approval(DJBH), T0);
      await testDb.handle.db
        .updateTable('tracked_approvals')
        .set({ approver_unreachable_since: later(1000).getTime() })
        .execute();
      await whileAnotherReplicaCommits(
        'update tracked_approvals set approver_unreachable_since = null where djbh = $1',
        link,
      );
      expect(await store.getApproval(DJBH)).toMatchObject({
        parties: { approver: { slackId: 'U0MARIAHOME' } },
      });
      // The other replica's link edited the request message; this one changed nothing it shows.
      expect(
        (await store.pendingAnnouncements(100)).filter((a) => a.kind === 'parent-update'),
      ).toEqual([]);
    });
  },
);
