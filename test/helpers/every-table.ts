import { type Kysely, sql } from 'kysely';
import type { Database } from '../../src/store/schema.ts';

/**
 * Searches every row of every table the database has (listed from the database itself, so a
 * table added later is searched too) for each needle, compared without case. Answers the tables
 * it read and a line for each needle found: `<table>: <needle> in <row>`.
 */
export async function findInEveryTable(
  db: Kysely<Database>,
  needles: readonly string[],
): Promise<{ tables: string[]; found: string[] }> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  const lower = needles.map((n) => n.toLowerCase());
  const found: string[] = [];
  for (const table of tables) {
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table.name)}`.execute(
      db,
    );
    for (const row of rows.rows) {
      const text = JSON.stringify(row).toLowerCase();
      for (const needle of lower)
        if (text.includes(needle)) found.push(`${table.name}: ${needle} in ${text}`);
    }
  }
  return { tables: tables.map((t) => t.name), found };
}
