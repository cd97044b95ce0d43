import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApprovalRepository } from '../../src/store/approval-repository.ts';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { approval, T0 } from '../helpers/store-fixtures.ts';

// Starting an approval on Postgres is one statement kept prepared on each connection
// (postgres-prepared.ts). What a prepared statement can meet in production: a pooler that moves
// the session (the statement is gone on the server the next time), and a later release's
// migration adding a column while it is prepared.
const postgres = TEST_DATABASES.find((d) => d.name === 'postgres');
if (!postgres) throw new Error('no Postgres entry in TEST_DATABASES');

describe.skipIf(postgres.skipReason)(
  `prepared statements on Postgres${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    let created: Awaited<ReturnType<typeof postgres.create>>;
    let handle: DatabaseHandle;
    // One connection, so what the statements below see is the connection the approvals used.
    beforeAll(async () => {
      created = await postgres.create();
      handle = await openDatabase(created.url, { poolSize: 1 });
    });
    afterAll(async () => {
      await handle?.close();
      await created?.drop();
    });
    const prepared = async () =>
      (
        await sql<{ name: string }>`select name from pg_prepared_statements`.execute(handle.db)
      ).rows.map((r) => r.name);
    const stored = async () =>
      (
        await handle.db
          .selectFrom('announcements')
          .select(['djbh', 'seq'])
          .orderBy('djbh')
          .orderBy('seq')
          .execute()
      ).map((r) => `${r.djbh} ${r.seq}`);

    it('prepares the approval-and-announcements statement once, and runs it again as prepared', async () => {
      const repository = createApprovalRepository(handle.db, 'postgres');
      await repository.createApproval(approval('PREP0000001a'), T0);
      const names = await prepared();
      expect(names).toHaveLength(1);
      expect(names[0]).toMatch(/^sa_[0-9a-f]{24}$/);
      await repository.createApproval(approval('PREP0000002a'), T0);
      expect(await prepared()).toEqual(names);
      expect(await stored()).toEqual([
        'PREP0000001a 1',
        'PREP0000001a 2',
        'PREP0000002a 1',
        'PREP0000002a 2',
      ]);
    });

    it('runs a statement the server no longer knows again unnamed, stores it once, and prepares nothing more', async () => {
      const repository = createApprovalRepository(handle.db, 'postgres');
      await repository.createApproval(approval('PREP0000003a'), T0);
      // As a pooler handing the session another server connection: the driver still thinks it
      // prepared the statement, the server has never seen it.
      await sql`deallocate all`.execute(handle.db);
      await repository.createApproval(approval('PREP0000004a'), T0);
      await repository.createApproval(approval('PREP0000005a'), T0);
      expect(await prepared()).toEqual([]);
      const rows = await stored();
      expect(rows.filter((r) => r.startsWith('PREP0000004a'))).toEqual([
        'PREP0000004a 1',
        'PREP0000004a 2',
      ]);
      expect(rows.filter((r) => r.startsWith('PREP0000005a'))).toHaveLength(2);
    });

    it('goes on after a later release adds a column to the tables it writes', async () => {
      const fresh = await openDatabase(created.url, { poolSize: 1 });
      try {
        const repository = createApprovalRepository(fresh.db, 'postgres');
        await repository.createApproval(approval('PREP0000006a'), T0);
        await sql`alter table tracked_approvals add column later_release text`.execute(fresh.db);
        await sql`alter table announcements add column later_release text`.execute(fresh.db);
        await repository.createApproval(approval('PREP0000007a'), T0);
        expect((await stored()).filter((r) => r.startsWith('PREP0000007a'))).toHaveLength(2);
      } finally {
        await fresh.close();
      }
    });
  },
);
