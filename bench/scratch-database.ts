import { sql } from 'kysely';
import type { DatabaseHandle } from '../src/store/database.ts';

/**
 * Empties every table of the app in a scratch database (BENCH_POSTGRES_URL), migrations' own
 * bookkeeping aside, so that each bench starts from what a fresh install has. On Postgres by
 * truncating: rows deleted by earlier runs stay in tables and indexes until a vacuum (CI's
 * Postgres runs no autovacuum), and with tens of thousands of them a claim of lanes or approvals
 * reads them all: the fleet's delivery measured 0.5 posts/s on such a database against 0.96 on a
 * fresh one. SQLite benches use a fresh file each time; their tables are deleted from.
 */
export async function emptyScratchDatabase(handle: DatabaseHandle): Promise<void> {
  if (handle.dialect === 'postgres') {
    const { rows } = await sql<{ name: string }>`
      select tablename as name from pg_tables
      where schemaname = current_schema() and tablename not like 'kysely%'`.execute(handle.db);
    if (rows.length > 0)
      await sql`truncate table ${sql.join(rows.map((r) => sql.id(r.name)))}`.execute(handle.db);
    return;
  }
  const { rows } = await sql<{ name: string }>`
    select name from sqlite_master
    where type = 'table' and name not like 'kysely%' and name not like 'sqlite%'`.execute(
    handle.db,
  );
  for (const { name } of rows) await sql`delete from ${sql.id(name)}`.execute(handle.db);
}

/**
 * What autovacuum does on its own within a minute or so after a load (CI's Postgres runs none):
 * without statistics the planner takes the tables for empty, and a claim reads and sorts every due
 * row instead of walking the due index.
 */
export async function analyzeScratchDatabase(handle: DatabaseHandle): Promise<void> {
  if (handle.dialect === 'postgres') await sql`analyze`.execute(handle.db);
}
