import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApprovalRepository } from '../../src/store/approval-repository.ts';
import { openDatabase } from '../../src/store/database.ts';
import { appliedMigrations, migrateDownOnce, migrateToLatest } from '../../src/store/migrations.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { approval, T0 } from '../helpers/store-fixtures.ts';

/** The last migration before announcements were numbered (020). */
const BEFORE_NUMBERING = '2026-11-25-019-conversation-lanes';
/** The last migration before the fleet's delivery columns (010). */
const BEFORE_FLEET_DELIVERY = '2026-11-23-009-request-again';

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `migrations on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
      });
      afterAll(() => testDb?.close());
      beforeEach(() => testDb.clear());

      it('migrates an existing database again without error', async () => {
        const again = await openDatabase(testDb.url);
        const applied = await sql<{
          name: string;
        }>`select name from kysely_migration order by name`.execute(again.db);
        await again.close();
        expect(applied.rows.map((r) => r.name)).toEqual([
          '2026-11-21-001-tracked-approvals',
          '2026-11-22-002-links-and-reminders',
          '2026-11-22-003-delivery-under-faults',
          '2026-11-22-004-submission-keys',
          '2026-11-22-005-entry-points',
          '2026-11-23-006-step-confirmations',
          '2026-11-23-007-job-runs',
          '2026-11-23-008-confirmation-answered-at',
          '2026-11-23-009-request-again',
          '2026-11-23-010-fleet-delivery',
          '2026-11-25-011-escalation',
          '2026-11-25-012-templates',
          '2026-11-25-013-paused-time',
          '2026-11-25-014-commit-horizon',
          '2026-11-25-015-logins-any-case',
          '2026-11-25-016-confirmation-digest',
          '2026-11-25-017-approval-template-id',
          '2026-11-25-018-requested-again-as',
          '2026-11-25-019-conversation-lanes',
          '2026-11-25-020-recorded-order',
          '2026-11-25-021-approver-handover',
          '2026-11-25-022-unused-indexes',
          '2026-11-27-027-hot-checks',
          '2026-11-28-028-delegations',
          '2026-11-28-029-approval-steps',
          '2026-11-28-030-workflow-later-steps',
        ]);
      });

      it('numbers the announcements an earlier release recorded in the order it recorded them, per approval, and goes on from there', async () => {
        const db = testDb.handle.db;
        const repository = createApprovalRepository(db, testDb.handle.dialect);
        await repository.createApproval(approval('AAAAAAAAAAAa'), T0);
        await repository.createApproval(approval('BBBBBBBBBBBb'), new Date(T0.getTime() - 1000));
        // As the release before numbering left them: no numbers, ordered by when, then by id
        // (down through every later migration, then the numbering's).
        while ((await appliedMigrations(db as never)).sort().at(-1) !== BEFORE_NUMBERING)
          await migrateDownOnce(db as never);
        await db
          .updateTable('announcements')
          .set({ created_at: T0.getTime() - 5000 })
          .where('id', '=', 'AAAAAAAAAAAa:approver-dm')
          .execute();
        await migrateToLatest(db as never);
        await repository.recordReminder('AAAAAAAAAAAa', 1, new Date(T0.getTime() - 60_000));
        const rows = await db
          .selectFrom('announcements')
          .select(['id', 'seq'])
          .orderBy('djbh')
          .orderBy('seq')
          .execute();
        expect(rows.map((r) => `${r.id} ${r.seq}`)).toEqual([
          'AAAAAAAAAAAa:approver-dm 1',
          'AAAAAAAAAAAa:request 2',
          'AAAAAAAAAAAa:reminder:1 3',
          'AAAAAAAAAAAa:reminder-note:1 4',
          'BBBBBBBBBBBb:approver-dm 1',
          'BBBBBBBBBBBb:request 2',
        ]);
      });

      it('fills in when each announcement an earlier release attempted was first attempted', async () => {
        const db = testDb.handle.db;
        const repository = createApprovalRepository(db, testDb.handle.dialect);
        await repository.createApproval(approval('CCCCCCCCCCCc'), T0);
        while ((await appliedMigrations(db as never)).sort().at(-1) !== BEFORE_FLEET_DELIVERY)
          await migrateDownOnce(db as never);
        await sql`update announcements set attempted_at = ${T0.getTime() + 5000}
          where id = 'CCCCCCCCCCCc:request'`.execute(db);
        await migrateToLatest(db as never);
        const rows = await db
          .selectFrom('announcements')
          .select(['id', 'first_attempted_at'])
          .orderBy('id')
          .execute();
        expect(rows).toEqual([
          { id: 'CCCCCCCCCCCc:approver-dm', first_attempted_at: null },
          { id: 'CCCCCCCCCCCc:request', first_attempted_at: T0.getTime() + 5000 },
        ]);
      });

      it.skipIf(database.name !== 'postgres')(
        'migrates a new database when two replicas start on it at once (postgres; a SQLite file has one owner)',
        async () => {
          // One waits for the other's migration lock while the other builds indexes concurrently,
          // which waits for every older snapshot: the waiting must not hold one.
          const fresh = await database.create();
          try {
            const both = await Promise.all([openDatabase(fresh.url), openDatabase(fresh.url)]);
            for (const handle of both) {
              expect(await appliedMigrations(handle.db as never)).toContain(
                '2026-11-27-027-hot-checks',
              );
              await handle.close();
            }
          } finally {
            await fresh.drop();
          }
        },
      );

      it('runs on a database a newer release migrated further (a rollback), and says so', async () => {
        // What release N+1 leaves behind: a migration this code does not know, and its table.
        await sql`insert into kysely_migration (name, timestamp) values ('2099-01-01-999-from-the-future', '2099-01-01T00:00:00.000Z')`.execute(
          testDb.handle.db,
        );
        await sql`create table future_only (id text)`.execute(testDb.handle.db);
        let stamp: string | undefined;
        try {
          const rolledBack = await openDatabase(testDb.url);
          try {
            expect(rolledBack.schemaAhead).toEqual(['2099-01-01-999-from-the-future']);
            const s = createApprovalRepository(rolledBack.db, rolledBack.dialect);
            await s.createApproval(approval('ROLLBACKxxxx'), T0);
            expect(await s.getApproval('ROLLBACKxxxx')).toMatchObject({
              outcome: { decision: 'pending' },
            });
          } finally {
            await rolledBack.close();
          }
          // A database that also lacks one of this release's migrations is not one it can run on.
          stamp = (
            await sql<{
              timestamp: string;
            }>`select timestamp from kysely_migration where name = '2026-11-23-007-job-runs'`.execute(
              testDb.handle.db,
            )
          ).rows[0]?.timestamp;
          await sql`delete from kysely_migration where name = '2026-11-23-007-job-runs'`.execute(
            testDb.handle.db,
          );
          await expect(openDatabase(testDb.url)).rejects.toThrow(
            /2026-11-23-007-job-runs are missing, but a newer release ran 2099-01-01-999-from-the-future/,
          );
        } finally {
          await sql`delete from kysely_migration where name = '2099-01-01-999-from-the-future'`.execute(
            testDb.handle.db,
          );
          if (stamp)
            await sql`insert into kysely_migration (name, timestamp) values ('2026-11-23-007-job-runs', ${stamp})`.execute(
              testDb.handle.db,
            );
          await sql`drop table future_only`.execute(testDb.handle.db);
        }
        const restored = await openDatabase(testDb.url);
        await restored.close();
        expect(restored.schemaAhead).toEqual([]);
      });
    },
  );
}
