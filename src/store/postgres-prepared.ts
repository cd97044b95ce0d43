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
 * A prepared statement keeps its parameters' types: a migration that changed the type of a column
 * it writes would need the app restarted (migrations here only expand: docs/deploying.md).
 * Only a statement that runs on its own, outside a transaction: a failed prepare (below) aborts
 * the transaction around it, and the statement could not run again unnamed.
 */
export function prepared(text: string, parameters: readonly unknown[]): CompiledQuery {
  return CompiledQuery.raw(`${text}${MARK}`, [...parameters]);
}
const MARK = ' /* prepared */';

/**
 * What a pooler that hands each transaction another server connection (PgBouncer before 1.21, or
 * with `max_prepared_statements = 0`) answers a named statement with: 26000, the server the
 * statement reached does not know it; 42P05, that server already has it, prepared there by
 * another of our connections (or another replica, or a process before a restart). Both come from
 * the Parse or the Bind, before the statement ran.
 */
const POOLER_ANSWERS = new Set(['26000', '42P05']);

/**
 * The pool as Kysely uses it, with marked statements run as named (prepared) ones. When a pooler
 * answers one as above, that statement runs again unnamed and this process prepares nothing from
 * then on (test/store/postgres-prepared.test.ts runs it through PgBouncer).
 */
export function withPreparedStatements(
  pool: pg.Pool,
  /** Told once, when a pooler's answer turned preparing off (the SQLSTATE it answered). */
  onStopped: (code: string) => void = () => {},
): PostgresPool {
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
          const code = error?.code ?? '';
          if (!POOLER_ANSWERS.has(code)) throw error;
          if (prepare) onStopped(code);
          prepare = false;
          return unnamed();
        }) as Promise<PostgresQueryResult<unknown>>;
    },
    release: () => client.release(),
  });
  // One wrapper per pooled connection: Kysely keeps its own connection object per client it is
  // given, so a new wrapper at every checkout would make it build another each time.
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrapped.get(client);
      if (!wrapper) {
        wrapper = wrap(client);
        wrapped.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
    // What Kysely opens a connection with to cancel a query: the pool's own settings.
    options: pool.options,
  };
}
