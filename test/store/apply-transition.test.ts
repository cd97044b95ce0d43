import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FenceItem } from '../../src/approvals/lifecycle/transition.ts';
import { writeTransition } from '../../src/store/apply-transition.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import type { TrackedApprovalRow } from '../../src/store/schema.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { approval, later, T0 } from '../helpers/store-fixtures.ts';

// The store's one way of recording an event: each fence item the domain may name, verified in
// SQL on both dialects. Where it holds the change and its announcements are written; where it
// does not, nothing is (the transitions themselves: test/approvals/lifecycle.test.ts).

const DJBH = 'AAAAAAAAAAAa';

interface Case {
  /** The row as the case needs it (columns), set before the transition is written. */
  row?: Partial<TrackedApprovalRow>;
  /** A delivered reminder of the current approver, attempted at T0. */
  deliveredReminder?: boolean;
  /** What else the case needs, besides the row (other rows, its announcements). */
  setUp?: (db: Db, stores: ApprovalStores) => Promise<unknown>;
  /** The item, as it holds for that row. */
  holds: FenceItem;
  /**
   * The same kind of item, made to fail: another value, the row changed (`breaks`), or something
   * else changed (`also`).
   */
  fails:
    | { item: FenceItem }
    | { breaks: Partial<TrackedApprovalRow> }
    | { also: (db: Db) => Promise<unknown> };
}

type Db = Awaited<ReturnType<typeof openTestDatabase>>['handle']['db'];

const at = later(60_000);
const unanswered = (atLeast: number): FenceItem => ({
  kind: 'unanswered-reminders',
  atLeast,
  answerWithinMs: 1000,
  now: at,
});

/** One case per kind of fence item: the compiler checks none is left out. */
const CASES: Record<FenceItem['kind'], Case> = {
  'claim-held': {
    row: { check_token: 'c1' },
    holds: { kind: 'claim-held', claim: 'c1' },
    fails: { item: { kind: 'claim-held', claim: 'c2' } },
  },
  open: { holds: { kind: 'open' }, fails: { breaks: { decision: 'approved' } } },
  'approver-term': {
    holds: { kind: 'approver-term', term: 0 },
    fails: { item: { kind: 'approver-term', term: 1 } },
  },
  'handed-over': {
    row: { approver_term: 1 },
    holds: { kind: 'handed-over' },
    fails: { breaks: { approver_term: 0 } },
  },
  'approver-before': {
    row: { approver_from_seq: 2 },
    holds: { kind: 'approver-before', seq: 3 },
    fails: { item: { kind: 'approver-before', seq: 2 } },
  },
  'approver-account-unknown': {
    row: { approver_slack_id: null },
    holds: { kind: 'approver-account-unknown' },
    fails: { breaks: { approver_slack_id: 'U0MARIA' } },
  },
  'approver-reachable': {
    holds: { kind: 'approver-reachable' },
    fails: { breaks: { approver_unreachable_since: T0.getTime() } },
  },
  'not-escalated': {
    holds: { kind: 'not-escalated' },
    fails: { breaks: { escalated_at: T0.getTime() } },
  },
  'unanswered-reminders': {
    deliveredReminder: true,
    holds: unanswered(1),
    fails: { item: unanswered(2) },
  },
  'approver-login': {
    // Compared as the service compares logins.
    holds: { kind: 'approver-login', login: 'Maria.Lopez@CORP.example' },
    fails: { item: { kind: 'approver-login', login: 'alex.kim@corp.example' } },
  },
  'approver-account': {
    holds: { kind: 'approver-account', chatId: 'U0MARIA' },
    fails: { item: { kind: 'approver-account', chatId: 'U0OTHER' } },
  },
  'not-requested-again': {
    holds: { kind: 'not-requested-again' },
    fails: { breaks: { requested_again_as: 'BBBBBBBBBBBb' } },
  },
  'requested-again-as': {
    row: { requested_again_as: 'BBBBBBBBBBBb' },
    holds: { kind: 'requested-again-as', djbh: 'BBBBBBBBBBBb' },
    fails: { item: { kind: 'requested-again-as', djbh: 'CCCCCCCCCCCc' } },
  },
  ended: {
    row: { tracking: 'gave-up' },
    holds: { kind: 'ended' },
    fails: { breaks: { tracking: 'active' } },
  },
  'unchanged-since': {
    row: { updated_at: T0.getTime() },
    holds: { kind: 'unchanged-since', before: later(1) },
    fails: { item: { kind: 'unchanged-since', before: T0 } },
  },
  'announcements-settled': {
    setUp: (db) => db.updateTable('announcements').set({ state: 'sent' }).execute(),
    holds: { kind: 'announcements-settled' },
    // Failed: an operator may still re-drive it.
    fails: {
      also: (db) =>
        db
          .updateTable('announcements')
          .set({ state: 'failed' })
          .where('kind', '=', 'request')
          .execute(),
    },
  },
  'request-again-ended': {
    row: { requested_again_as: 'BBBBBBBBBBBb' },
    // Its Request again ended (and one long gone holds too: nothing names it then).
    setUp: async (db, stores) => {
      await stores.createApproval(approval('BBBBBBBBBBBb'), T0);
      await db
        .updateTable('tracked_approvals')
        .set({ tracking: 'finished' })
        .where('djbh', '=', 'BBBBBBBBBBBb')
        .execute();
    },
    holds: { kind: 'request-again-ended' },
    fails: {
      also: (db) =>
        db
          .updateTable('tracked_approvals')
          .set({ tracking: 'active' })
          .where('djbh', '=', 'BBBBBBBBBBBb')
          .execute(),
    },
  },
};

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(`a transition’s fence on ${database.name}`, () => {
    let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
    let store: ApprovalStores;

    beforeAll(async () => {
      testDb = await openTestDatabase(database);
      store = createApprovalStores(testDb.handle.db, testDb.handle.dialect);
    });
    afterAll(() => testDb?.close());
    beforeEach(() => testDb.clear());

    const db = () => testDb.handle.db;

    async function given(c: Case, fails?: Case['fails']): Promise<void> {
      await store.createApproval(approval(DJBH), T0);
      const row = { ...c.row, ...(fails && 'breaks' in fails ? fails.breaks : {}) };
      if (Object.keys(row).length > 0)
        await db().updateTable('tracked_approvals').set(row).where('djbh', '=', DJBH).execute();
      await c.setUp?.(db(), store);
      if (fails && 'also' in fails) await fails.also(db());
      if (c.deliveredReminder) {
        await store.recordReminder(DJBH, 1, T0);
        await db()
          .updateTable('announcements')
          .set({
            state: 'sent',
            sent_ts: '1.1',
            sent_channel: 'D0MARIA',
            attempted_at: T0.getTime(),
          })
          .where('kind', '=', 'reminder')
          .execute();
      }
    }

    const probe = (fence: FenceItem) =>
      writeTransition(
        db(),
        DJBH,
        {
          change: { updatedAt: at },
          fence: [fence],
          announcements: [{ kind: 'parent-update', detail: 'probe' }],
        },
        at,
      );

    const probeRecorded = async () =>
      (await store.pendingAnnouncements(100)).some((a) => a.id === `${DJBH}:parent-update:probe`);

    it.each(Object.entries(CASES))('%s: written where it holds', async (_kind, c) => {
      await given(c);
      expect((await probe(c.holds))?.outcome.changedAt).toEqual(at);
      expect(await probeRecorded()).toBe(true);
    });

    it.each(Object.entries(CASES))('%s: nothing written where it fails', async (_kind, c) => {
      await given(c, c.fails);
      expect(await probe('item' in c.fails ? c.fails.item : c.holds)).toBe(undefined);
      expect((await store.getApproval(DJBH))?.outcome.changedAt).not.toEqual(at);
      expect(await probeRecorded()).toBe(false);
    });

    it('verifies the fence alone when nothing changes, and records nothing when it fails', async () => {
      await store.createApproval(approval(DJBH), T0);
      const fenceOnly = (login: string) =>
        writeTransition(
          db(),
          DJBH,
          { change: {}, fence: [{ kind: 'approver-login', login }], announcements: [] },
          at,
        );
      expect((await fenceOnly('maria.lopez@corp.example'))?.djbh).toBe(DJBH);
      expect(await fenceOnly('alex.kim@corp.example')).toBe(undefined);
    });
  });
}
