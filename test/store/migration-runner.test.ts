import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runPendingMigrations } from '../../src/store/migration-runner.ts';
import { TEST_DATABASES, type TestDatabase } from '../helpers/databases.ts';

// The runner on its own, with migrations of the test's making, on an empty database of each
// dialect (the app's migrations are covered by migrations.test.ts and migration-under-load.test.ts).

function open(database: TestDatabase, url: string): Kysely<unknown> {
  return database.name === 'postgres'
    ? new Kysely({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }),
      })
    : new Kysely({ dialect: new SqliteDialect({ database: new SQLite(url) }) });
}

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `the migration runner on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let url: string;
      let drop: () => Promise<void>;
      let db: Kysely<unknown>;

      beforeEach(async () => {
        ({ url, drop } = await database.create());
        if (database.name === 'sqlite') {
          const { mkdirSync } = await import('node:fs');
          const { dirname } = await import('node:path');
          mkdirSync(dirname(url), { recursive: true });
        }
        db = open(database, url);
        await sql`create table things (id integer primary key)`.execute(db);
      });
      afterEach(async () => {
        await db.destroy();
        await drop();
      });

      it('undoes a migration that fails part-way, names it, and keeps the ones before it', async () => {
        const failing = runPendingMigrations(db, {
          '2099-01-01-001-fine': {
            async up(trx) {
              await sql`alter table things add column a text`.execute(trx);
            },
          },
          '2099-01-01-002-breaks': {
            async up(trx) {
              await sql`alter table things add column b text`.execute(trx);
              await sql`select * from no_such_table`.execute(trx);
            },
          },
        });
        await expect(failing).rejects.toThrow(/Database migration 2099-01-01-002-breaks failed/);
        const done = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
        expect(done.rows.map((r) => r.name)).toEqual(['2099-01-01-001-fine']);
        await sql`select a from things`.execute(db);
        await expect(sql`select b from things`.execute(db)).rejects.toThrow();
      });

      it.skipIf(database.name !== 'postgres')(
        'lets other queries of the table through while it waits behind a long transaction, and finishes once that ends (postgres)',
        async () => {
          const holder = new pg.Client({ connectionString: url });
          const reader = new pg.Client({ connectionString: url, statement_timeout: 1_000 });
          await holder.connect();
          await reader.connect();
          try {
            // Someone's long query holds the table; an ALTER TABLE queues behind it, and without a
            // lock timeout every later query of the table would queue behind the ALTER.
            await holder.query('begin');
            await holder.query('select * from things');
            let settled = false;
            const migrating = runPendingMigrations(db, {
              '2099-01-01-001-column': {
                async up(trx) {
                  await sql`alter table things add column c text`.execute(trx);
                },
              },
            }).finally(() => {
              settled = true;
            });
            // Each read answers within its 1 s statement timeout while the migration keeps trying.
            const waitingSeen = async () =>
              (
                await reader.query<{ n: string }>(
                  `select count(*) as n from pg_stat_activity
                    where wait_event_type = 'Lock' and query like 'alter table things%'`,
                )
              ).rows[0]?.n !== '0';
            while (!(await waitingSeen())) await new Promise((resolve) => setTimeout(resolve, 20));
            // The ALTER has queued: reads of the table keep being answered meanwhile.
            for (let read = 0; read < 10; read++) {
              await reader.query('select count(*) from things');
              await new Promise((resolve) => setTimeout(resolve, 100));
            }
            expect(settled).toBe(false);
            await holder.query('commit');
            await migrating;
            await reader.query('select c from things');
          } finally {
            await holder.end();
            await reader.end();
          }
        },
        60_000,
      );
    },
  );
}
