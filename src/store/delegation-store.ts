import type { Kysely } from 'kysely';
import type { Delegation, Delegations } from '../approvals/delegation.ts';
import { loginKey } from '../approvals/person.ts';
import type { Database, DelegationRow } from './schema.ts';

/**
 * The Delegations port over Kysely. One row per person who is away, keyed by their login as
 * person.ts compares logins (loginKey, computed here rather than by the database's lower(), which
 * folds more on Postgres than person.ts does).
 */
export function createDelegationStore(db: Kysely<Database>): Delegations {
  return {
    async set(d) {
      const row: DelegationRow = {
        from_key: loginKey(d.from),
        from_login: d.from,
        to_login: d.to,
        until: d.until.getTime(),
        set_at: d.setAt.getTime(),
      };
      await db
        .insertInto('delegations')
        .values(row)
        .onConflict((oc) =>
          oc.column('from_key').doUpdateSet({
            from_login: row.from_login,
            to_login: row.to_login,
            until: row.until,
            set_at: row.set_at,
          }),
        )
        .execute();
    },
    async clear(from) {
      const result = await db
        .deleteFrom('delegations')
        .where('from_key', '=', loginKey(from))
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async of(from) {
      const row = await db
        .selectFrom('delegations')
        .selectAll()
        .where('from_key', '=', loginKey(from))
        .executeTakeFirst();
      return row ? toDelegation(row) : undefined;
    },
    async inForceAt(now) {
      const rows = await db
        .selectFrom('delegations')
        .selectAll()
        .where('until', '>', now.getTime())
        .orderBy('from_key')
        .execute();
      return rows.map(toDelegation);
    },
    async list() {
      const rows = await db.selectFrom('delegations').selectAll().orderBy('from_key').execute();
      return rows.map(toDelegation);
    },
  };
}

function toDelegation(row: DelegationRow): Delegation {
  return {
    from: row.from_login,
    to: row.to_login,
    until: new Date(row.until),
    setAt: new Date(row.set_at),
  };
}
