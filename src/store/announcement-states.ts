import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

/**
 * The state (`pending`, `sent`, `failed`, …) of each of these announcements that exists; an id
 * missing from the map is unknown. The operator command reads it to say which ids it could not
 * re-drive and why.
 */
export async function announcementStates(
  db: Kysely<Database>,
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('announcements')
    .select(['id', 'state'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((row) => [row.id, row.state]));
}
