import { createHash } from 'node:crypto';
import {
  CompiledQuery,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from 'kysely';
import type pg from 'pg';

/**
 * A statement that Postgres keeps prepared on each connection: parsed and planned once, then only
 * bound and run. For a statement that is the same text every time and cheap to plan badly:
 * starting an approval (three rows in one statement) spent a third of its time being parsed and
 * planned again (1.2 ms unnamed, 0.85 ms prepared, bench/README). Never one that reads `*`: a
 * column added by a later release changes its result, and Postgres refuses to run such a plan.
 */
export function prepared(text: string, parameters: readonly unknown[]): CompiledQuery {
  return CompiledQuery.raw(`${text}${MARK}`, [...parameters]);
}
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
