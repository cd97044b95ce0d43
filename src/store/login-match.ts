import { type RawBuilder, type SqlBool, sql } from 'kysely';

/**
 * The store's side of approvals/person.ts's one rule for logins: case-insensitively, `lower(...)`
 * on both sides (both dialects have `lower`; each such lookup has an index on `lower(column)`).
 * SQLite's lower() folds ASCII letters only, as person.ts does; Postgres's folds more (U+212A to
 * `k`), so what this finds is a superset on Postgres: a caller that acts on one person passes the
 * rows through sameLogin (account links) or the access policy (lists, Home).
 */
export function loginIs(column: string, login: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`lower(${sql.ref(column)}) = lower(${login})`;
}
