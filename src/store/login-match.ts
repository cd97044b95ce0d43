import { type RawBuilder, type SqlBool, sql } from 'kysely';

/**
 * The store's side of approvals/person.ts's one rule for logins: case-insensitively, `lower(...)`
 * on both sides (both dialects have `lower`; each such lookup has an index on `lower(column)`).
 */
export function loginIs(column: string, login: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`lower(${sql.ref(column)}) = lower(${login})`;
}
