import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';

// The Postgres pool: as large as it is told, a statement that runs too long is cancelled, and
// queries waiting for a connection are counted (the metric an operator watches).

const postgres = TEST_DATABASES.find((d) => d.name === 'postgres');
const skipReason = postgres?.skipReason;

describe.skipIf(skipReason)(
  `the Postgres pool${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let handle: DatabaseHandle;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      if (!postgres) throw new Error('no postgres');
      const created = await postgres.create();
      drop = created.drop;
      handle = await openDatabase(created.url, { poolSize: 2, statementTimeoutMs: 300 });
    });
    afterAll(async () => {
      await handle?.close();
      await drop?.();
    });

    it('cancels a statement that runs past the statement timeout', async () => {
      const shown = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(
        handle.db,
      );
      expect(shown.rows[0]?.statement_timeout).toBe('300ms');
      await expect(sql`select pg_sleep(2)`.execute(handle.db)).rejects.toThrow(/statement timeout/);
    });

    it('survives its connection being killed while in use, and answers with a new one', async () => {
      const killer = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL });
      await killer.connect();
      try {
        const inTransaction = handle.db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          // Killed between two statements: the client is checked out, with no query under way.
          await killer.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
          await new Promise((r) => setTimeout(r, 200));
          await sql`select 1`.execute(trx);
        });
        await expect(inTransaction).rejects.toThrow();
        const { rows } = await sql<{ one: number }>`select 1 as one`.execute(handle.db);
        expect(rows[0]?.one).toBe(1);
      } finally {
        await killer.end();
      }
    });

    it('counts queries waiting for one of its connections', async () => {
      const slow = [1, 2, 3, 4].map(() => sql`select pg_sleep(0.2)`.execute(handle.db));
      await new Promise((r) => setTimeout(r, 50));
      const during = handle.pool();
      await Promise.all(slow);
      expect(during.total).toBe(2);
      expect(during.waiting).toBe(2);
      expect(handle.pool().waiting).toBe(0);
    });

    it('sets no statement timeout with 0 (for PgBouncer), and migrates without one', async () => {
      if (!postgres) throw new Error('no postgres');
      const created = await postgres.create();
      try {
        // Another replica is migrating: it holds the migration lock for longer than the timeout.
        const other = new pg.Client({ connectionString: created.url });
        await other.connect();
        await other.query('begin');
        await other.query('select pg_advisory_xact_lock(3853314791062309107)');
        // Settled either way at once, so a refusal is this test's failure, not an unhandled one.
        const opening = openDatabase(created.url, { statementTimeoutMs: 200 }).then(
          (handle) => ({ handle }),
          (error: unknown) => ({ error }),
        );
        await new Promise((r) => setTimeout(r, 700));
        await other.query('commit');
        await other.end();
        const waited = await opening;
        expect(waited).not.toHaveProperty('error');
        if ('handle' in waited) await waited.handle.close();
        const none = await openDatabase(created.url, { statementTimeoutMs: 0 });
        const shown = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(
          none.db,
        );
        await none.close();
        expect(shown.rows[0]?.statement_timeout).toBe('0');
      } finally {
        await created.drop();
      }
    });
  },
);
