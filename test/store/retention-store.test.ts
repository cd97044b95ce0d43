import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { purgeExpired } from '../../src/approvals/retention.ts';
import { createApprovalStores } from '../../src/store/approval-stores.ts';
import { createRetentionStore } from '../../src/store/retention-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { sampleApproval } from '../helpers/outbox-seed.ts';

const DAY = 24 * 3_600_000;
const NOW = new Date('2026-11-23T03:17:00Z');
const ago = (days: number) => new Date(NOW.getTime() - days * DAY);

for (const which of TEST_DATABASES) {
  describe.skipIf(which.skipReason)(
    `retention on ${which.name}${which.skipReason ? ` (skipped: ${which.skipReason})` : ''}`,
    () => {
      let database: Awaited<ReturnType<typeof openTestDatabase>>;
      beforeAll(async () => {
        database = await openTestDatabase(which);
      });
      afterAll(() => database?.close());
      beforeEach(() => database.clear());

      /** An approval as it stands `days` after its last change, its announcements in `state`. */
      async function approval(
        djbh: string,
        days: number,
        tracking: 'active' | 'finished' | 'gave-up',
        announcements: 'sent' | 'pending' = 'sent',
      ) {
        const db = database.handle.db;
        await createApprovalStores(db, database.handle.dialect).createApproval(
          sampleApproval(djbh, {
            request: { createdAt: ago(days + 1), note: 'Termination of J. Doe' },
          }),
          ago(days + 1),
        );
        await db
          .updateTable('tracked_approvals')
          .set({ tracking, updated_at: ago(days).getTime() })
          .where('djbh', '=', djbh)
          .execute();
        await db
          .updateTable('announcements')
          .set({ state: announcements })
          .where('djbh', '=', djbh)
          .execute();
      }
      const approvals = async () =>
        (
          await database.handle.db
            .selectFrom('tracked_approvals')
            .select('djbh')
            .orderBy('djbh')
            .execute()
        ).map((r) => r.djbh);
      const announcementsOf = async (djbh: string) =>
        (
          await database.handle.db
            .selectFrom('announcements')
            .select('id')
            .where('djbh', '=', djbh)
            .execute()
        ).length;

      it('deletes ended approvals and their announcements after the retention, and nothing else', async () => {
        await approval('OLD_FINISHED', 401, 'finished');
        await approval('OLD_GAVE_UP', 500, 'gave-up');
        await approval('OLD_ACTIVE', 401, 'active');
        await approval('OLD_UNDELIVERED', 401, 'finished', 'pending');
        await approval('RECENT_ENDED', 399, 'finished');
        const db = database.handle.db;
        await db
          .insertInto('linked_accounts')
          .values({ slack_user_id: 'U1', team_id: 'T1', login: 'a', name: 'A', linked_at: 0 })
          .execute();
        await db
          .insertInto('submission_keys')
          .values([
            { key: 'old', taken_at: NOW.getTime() - DAY - 1 },
            { key: 'new', taken_at: NOW.getTime() - DAY + 60_000 },
          ])
          .execute();
        // Workflow confirmations: settled and old go; one still owed to its step, or recent, stays.
        const confirmation = (id: string, state: string, stepClosed: number, days: number) => ({
          execution_id: id,
          team_id: 'T1',
          requester_slack_id: 'U1',
          started_by_slack_id: 'U2',
          approver_slack_id: null,
          title: 'Termination of J. Doe',
          note: 'n',
          channel_id: null,
          locale: 'en-US',
          state,
          reason: null,
          created_at: ago(days).getTime(),
          expires_at: ago(days).getTime() + 3_600_000,
          asked_channel: null,
          asked_ts: null,
          step_closed: stepClosed,
        });
        await db
          .insertInto('step_confirmations')
          .values([
            confirmation('Fx_started_old', 'started', 0, 401),
            confirmation('Fx_declined_told', 'declined', 1, 401),
            confirmation('Fx_declined_owed', 'declined', 0, 401),
            confirmation('Fx_pending_old', 'pending', 0, 401),
            confirmation('Fx_started_recent', 'started', 0, 10),
          ])
          .execute();

        const counts = await purgeExpired(
          createRetentionStore(db, database.handle.dialect),
          { retentionDays: 400 },
          NOW,
        );

        expect(counts).toEqual({
          approvals: 2,
          announcements: 4,
          confirmations: 2,
          submissionKeys: 1,
          delegations: 0,
          templates: 0,
          templateChanges: 0,
        });
        expect(await approvals()).toEqual(['OLD_ACTIVE', 'OLD_UNDELIVERED', 'RECENT_ENDED']);
        expect(await announcementsOf('OLD_FINISHED')).toBe(0);
        expect(await announcementsOf('OLD_UNDELIVERED')).toBe(2);
        const keys = await db.selectFrom('submission_keys').select('key').execute();
        expect(keys.map((k) => k.key)).toEqual(['new']);
        const confirmations = await db
          .selectFrom('step_confirmations')
          .select('execution_id')
          .orderBy('execution_id')
          .execute();
        expect(confirmations.map((c) => c.execution_id)).toEqual([
          'Fx_declined_owed',
          'Fx_pending_old',
          'Fx_started_recent',
        ]);
        // An account link is the person's own setting: it stays until they unlink.
        expect(await db.selectFrom('linked_accounts').select('login').execute()).toHaveLength(1);
      });

      it('keeps every approval with a retention of 0, and still lets submission keys go', async () => {
        await approval('ANCIENT', 5000, 'finished');
        const counts = await purgeExpired(
          createRetentionStore(database.handle.db, database.handle.dialect),
          { retentionDays: 0 },
          NOW,
        );
        expect(counts).toEqual({
          approvals: 0,
          announcements: 0,
          confirmations: 0,
          submissionKeys: 0,
          delegations: 0,
          templates: 0,
          templateChanges: 0,
        });
        expect(await approvals()).toEqual(['ANCIENT']);
      });

      it('keeps an ended approval while one of its announcements failed (an operator may re-drive it)', async () => {
        await approval('FAILED_ONE', 401, 'finished');
        await database.handle.db
          .updateTable('announcements')
          .set({ state: 'failed' })
          .where('id', '=', 'FAILED_ONE:request')
          .execute();
        const counts = await purgeExpired(
          createRetentionStore(database.handle.db, database.handle.dialect),
          { retentionDays: 400 },
          NOW,
        );
        expect(counts?.approvals).toBe(0);
        expect(await approvals()).toEqual(['FAILED_ONE']);
        expect(await announcementsOf('FAILED_ONE')).toBe(2);
      });

      it('keeps an ended approval while its Request again is still followed, and lets it go with it', async () => {
        // An old chain: OLD was requested again as MIDDLE (ended too), MIDDLE as OPEN (waiting).
        await approval('OLD', 401, 'finished');
        await approval('MIDDLE', 401, 'finished');
        await approval('OPEN', 401, 'active');
        const db = database.handle.db;
        const againAs = (djbh: string, as: string) =>
          db
            .updateTable('tracked_approvals')
            .set({ requested_again_as: as })
            .where('djbh', '=', djbh)
            .execute();
        await againAs('OLD', 'MIDDLE');
        await againAs('MIDDLE', 'OPEN');
        const store = createRetentionStore(db, database.handle.dialect);

        expect((await purgeExpired(store, { retentionDays: 400 }, NOW))?.approvals).toBe(1);
        // MIDDLE's Request again must still reach it once posted (request-again-posted).
        expect(await approvals()).toEqual(['MIDDLE', 'OPEN']);

        await db
          .updateTable('tracked_approvals')
          .set({ tracking: 'finished', updated_at: ago(401).getTime() })
          .where('djbh', '=', 'OPEN')
          .execute();
        expect(await store.deleteEndedApprovals(ago(400), 10)).toEqual({
          approvals: 2,
          announcements: 4,
        });
        expect(await approvals()).toEqual([]);
      });

      it('deletes a large backlog in batches beside a pending outbox, letting timers run between them', async () => {
        for (let i = 0; i < 120; i++)
          await approval(`P${String(i).padStart(5, '0')}`, 1, 'active', 'pending');
        for (let i = 0; i < 1001; i++)
          await approval(`B${String(i).padStart(5, '0')}`, 401, 'finished');
        let ticks = 0;
        const ticker = setInterval(() => ticks++, 1);
        const counts = await purgeExpired(
          createRetentionStore(database.handle.db, database.handle.dialect),
          { retentionDays: 400 },
          NOW,
        );
        clearInterval(ticker);
        expect(counts?.approvals).toBe(1001);
        expect((await approvals()).length).toBe(120);
        // SQLite runs on the event loop: without a pause between batches no timer would fire.
        expect(ticks).toBeGreaterThan(0);
      }, 60_000);

      it('stops between batches when asked, and the next tick finishes the job', async () => {
        for (let i = 0; i < 450; i++)
          await approval(`S${String(i).padStart(5, '0')}`, 401, 'finished');
        const store = createRetentionStore(database.handle.db, database.handle.dialect);
        let batches = 0;
        const counting = {
          ...store,
          deleteEndedApprovals: (before: Date, limit: number) => {
            batches++;
            return store.deleteEndedApprovals(before, limit);
          },
        };
        const stopped = await purgeExpired(
          counting,
          { retentionDays: 400 },
          NOW,
          () => batches >= 1,
        );
        expect(stopped?.approvals).toBe(200);
        const rest = await purgeExpired(store, { retentionDays: 400 }, NOW);
        expect(rest?.approvals).toBe(250);
        expect(await approvals()).toEqual([]);
      }, 60_000);

      it('leaves the run due when it fails, so the next tick tries again', async () => {
        const store = createRetentionStore(database.handle.db, database.handle.dialect);
        const failing = {
          ...store,
          deleteSubmissionKeys: () => Promise.reject(new Error('disk I/O error')),
        };
        await expect(purgeExpired(failing, { retentionDays: 400 }, NOW)).rejects.toThrow('disk');
        expect(await purgeExpired(store, { retentionDays: 400 }, NOW)).toBeDefined();
      });
    },
  );
}
