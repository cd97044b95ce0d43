import { createHash } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { sql } from 'kysely';
import type pg from 'pg';

/**
 * Appended to a statement (`.modifyEnd(PREPARED)`) that Postgres should keep prepared on each
 * connection: parsed and planned once, then only bound and run. For a statement that is the same
 * text every time and cheap to plan badly: starting an approval (three rows in one statement)
 * spent a third of its time being parsed and planned again (1.2 ms unnamed, 0.85 ms prepared,
 * bench/README). Never on a statement that reads `*`: a column added by a later release changes
 * its result, and Postgres refuses to run such a prepared plan.
 */
export const PREPARED = sql.raw(' /* prepared */');
const MARK = ' /* prepared */';

/** SQLSTATE 26000: the server does not know the statement (a pooler that moves sessions). */
const UNKNOWN_STATEMENT = '26000';

/**
 * The pool as Kysely uses it, with marked statements run as named (prepared) ones. Behind a
 * pooler that hands each transaction another server connection (PgBouncer before 1.21, or with
 * `max_prepared_statements = 0`) a named statement is not found there: that statement runs again
 * unnamed (it failed before it ran) and this process prepares nothing from then on.
 */
export function withPreparedStatements(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>();
  let prepare = true;
  const nameOf = (text: string): string => {
    let name = names.get(text);
    if (!name) {
      name = `sa_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      names.set(text, name);
    }
    return name;
  };
  const wrap = (client: pg.PoolClient): PostgresPoolClient => ({
    // biome-ignore lint/suspicious/noExplicitAny: Kysely's overloads (text or a cursor) pass through.
    query(text: any, values?: ReadonlyArray<unknown>): any {
      if (!prepare || typeof text !== 'string' || !text.endsWith(MARK))
        return client.query(text, values as unknown[]);
      const unnamed = () => client.query(text, values as unknown[]);
      return client
        .query({ name: nameOf(text), text, values: values as unknown[] })
        .catch((error: { code?: string }) => {
          if (error?.code !== UNKNOWN_STATEMENT) throw error;
          prepare = false;
          return unnamed();
        }) as Promise<PostgresQueryResult<unknown>>;
    },
    release: () => client.release(),
  });
  return {
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  };
}
