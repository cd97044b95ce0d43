import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from './migrations.ts';
import type { Database } from './schema.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Where the data is, for logs; a Postgres URL without its password. */
  location: string;
  close(): Promise<void>;
}

const PG_INT8 = 20;

/** `postgres://…`/`postgresql://…` opens Postgres; anything else is a SQLite file path (folders created). */
export function dialectOf(url: string): DialectName {
  return /^postgres(ql)?:\/\//.test(url) ? 'postgres' : 'sqlite';
}

export interface OpenOptions {
  /**
   * Told when Postgres drops an idle pooled connection (a restart, a failover). Without a
   * listener the pool's 'error' event would crash the process; the next query reconnects.
   */
  onConnectionError?: (error: Error) => void;
}

/** Opens the database and migrates it to the latest version. */
export async function openDatabase(
  url: string,
  options: OpenOptions = {},
): Promise<DatabaseHandle> {
  const dialect = dialectOf(url);
  let db: Kysely<Database>;
  let location: string;
  if (dialect === 'postgres') {
    const pool = new pg.Pool({
      connectionString: url,
      max: 5,
      // Epoch-millisecond columns are bigint; they fit a JS number, so read them as one.
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === PG_INT8
            ? (v: string) => Number(v)
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    pool.on('error', (error) => options.onConnectionError?.(error));
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    location = redactPassword(url);
  } else {
    const path = url === ':memory:' ? url : resolve(url);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new SQLite(path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    location = path;
  }
  try {
    await migrateToLatest(db as Kysely<unknown>);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { db, dialect, location, close: () => db.destroy() };
}

export function redactPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
