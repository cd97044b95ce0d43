import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { AppError } from '../errors.ts';
import { redactText, redactUrl } from '../redact.ts';
import { MigrationFailedError } from './migration-runner.ts';
import { appliedMigrations, migrateToLatest } from './migrations.ts';
import { withPreparedStatements } from './postgres-prepared.ts';
import type { Database } from './schema.ts';
import {
  claimSqliteFile,
  PatientSqliteDialect,
  SqliteInUseError,
  withStatementCache,
} from './sqlite-file.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Where the data is, for logs; a Postgres URL without its password. */
  location: string;
  /** Migrations a newer release ran that this one does not know (after a rollback); usually none. */
  schemaAhead: string[];
  /** The connection pool now, for metrics: SQLite has one connection and nobody waits for it. */
  pool(): PoolStats;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Queries waiting for a free connection. */
  waiting: number;
  total: number;
  idle: number;
}

const PG_INT8 = 20;
/** How long a SQLite query waits for another process's lock (asynchronously) before failing. */
const SQLITE_LOCK_WAIT_MS = 5000;

/**
 * `postgres://…`/`postgresql://…` (the scheme in any case, as URLs have it) opens Postgres; anything
 * else is a SQLite file path (folders created).
 */
export function dialectOf(url: string): DialectName {
  return /^postgres(ql)?:\/\//i.test(url) ? 'postgres' : 'sqlite';
}

/**
 * Why `url`, taken for a SQLite path, is surely not one: it has a URL scheme, or carries a password
 * (libpq's `key=value` form). Opened as a path it would be printed (the "database ready" line) and
 * made into folders, password and all.
 */
function notAPath(url: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url))
    return 'a URL that is not postgres:// or postgresql:// (a SQLite database is a file path)';
  if (redactUrl(url) !== url)
    return 'a connection string with a password, not a file path (Postgres takes a postgres:// URL)';
  return undefined;
}

export interface OpenOptions {
  /**
   * Told when Postgres drops an idle pooled connection (a restart, a failover). Without a
   * listener the pool's 'error' event would crash the process; the next query reconnects.
   */
  onConnectionError?: (error: Error) => void;
  /**
   * Told once when a pooler in front of Postgres turned prepared statements off for this process
   * (postgres-prepared.ts): creates go on, unprepared, a few hundred µs slower.
   */
  onPreparedStatementsOff?: (code: string) => void;
  /**
   * False for tools beside the app (the operator command): they open what the app made, never
   * create a database or change its schema, and fail when it is not there.
   */
  migrate?: boolean;
  /** Postgres: connections in the pool (default 10), and the statement timeout (default 15 s; 0: none). */
  poolSize?: number;
  statementTimeoutMs?: number;
}

/**
 * Opens the database and migrates it to the latest version (unless `migrate: false`). Any failure
 * is a DatabaseError naming the location (password hidden) and the cause in one line.
 */
export async function openDatabase(
  url: string,
  options: OpenOptions = {},
): Promise<DatabaseHandle> {
  const dialect = dialectOf(url);
  const refused = dialect === 'sqlite' ? notAPath(url) : undefined;
  if (refused) throw new DatabaseError(redactUrl(url), new Error(`it is ${refused}`), url);
  const location =
    dialect === 'postgres' ? redactUrl(url) : url === ':memory:' ? url : resolve(url);
  let db: Kysely<Database>;
  // SQLite has no pool: one connection, and waiting for it is waiting for the lock.
  let pool: () => PoolStats = () => ({ waiting: 0, total: 0, idle: 0 });
  let release = () => {};
  // The Postgres driver is loaded for Postgres only: a SQLite start does not pay for loading it.
  const driver = dialect === 'postgres' ? (await import('pg')).default : undefined;
  try {
    if (driver) {
      const opened = openPostgres(driver, url, options);
      db = opened.db;
      pool = () => ({
        waiting: opened.pool.waitingCount,
        total: opened.pool.totalCount,
        idle: opened.pool.idleCount,
      });
    } else {
      const tool = options.migrate === false;
      // The app owns its file; tools beside it (the operator command) only read and re-drive.
      if (!tool && location !== ':memory:') {
        ensureFolder(dirname(location));
        release = claimSqliteFile(location);
      }
      db = openSqlite(location, { mustExist: tool });
    }
  } catch (error) {
    release();
    if (error instanceof SqliteInUseError) throw error;
    throw new DatabaseError(location, error, url);
  }
  let schemaAhead: string[] = [];
  try {
    if (options.migrate === false) {
      if ((await appliedMigrations(db as Kysely<unknown>)).length === 0)
        throw new Error('it holds no slack-approvals data (the app creates it on its first start)');
    } else if (driver && (options.statementTimeoutMs ?? 15_000) > 0) {
      // Migrations run without the statement timeout: waiting for another replica's migration
      // lock, or building an index on a table grown for years, may rightly take longer.
      const unlimited = openPostgres(driver, url, {
        ...options,
        poolSize: 1,
        statementTimeoutMs: 0,
      });
      try {
        schemaAhead = (await migrateToLatest(unlimited.db as Kysely<unknown>)).ahead;
      } finally {
        await unlimited.db.destroy();
      }
    } else schemaAhead = (await migrateToLatest(db as Kysely<unknown>)).ahead;
  } catch (error) {
    await db.destroy().catch(() => undefined);
    release();
    // A failed migration is named; any other failure is told by its cause (the driver's error).
    const told = error instanceof MigrationFailedError ? error : undefined;
    throw new DatabaseError(location, told ?? (error as { cause?: unknown }).cause ?? error, url);
  }
  const close = async () => {
    await db.destroy();
    release();
  };
  return { db, dialect, location, schemaAhead, pool, close };
}

/** The database could not be opened or migrated. */
export class DatabaseError extends AppError {
  /** `url` is what was opened: a driver's message may quote it, so it is hidden there too. */
  constructor(location: string, cause: unknown, url?: string) {
    const reason = redactText(cause instanceof Error ? cause.message : String(cause), [url]);
    const code = (cause as { code?: unknown }).code;
    super(
      'database_unavailable',
      `Could not open the database at ${location}: ${reason}${typeof code === 'string' && !reason.includes(code) ? ` (${code})` : ''}`,
      { cause },
    );
  }
}

function openPostgres(
  driver: typeof pg,
  url: string,
  options: OpenOptions,
): { db: Kysely<Database>; pool: pg.Pool } {
  const pool = new driver.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // A statement stuck behind a lock (or a runaway query) fails instead of holding a connection
    // for ever; every query here is small and indexed.
    // 0 sets none: behind PgBouncer (which refuses it as a startup parameter) set it on the role.
    ...((options.statementTimeoutMs ?? 15_000) > 0
      ? { statement_timeout: options.statementTimeoutMs ?? 15_000 }
      : {}),
    // An unreachable host must fail the start, not hang it.
    connectionTimeoutMillis: 10_000,
    // Epoch-millisecond columns are bigint; they fit a JS number, so read them as one.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8
          ? (v: string) => Number(v)
          : driver.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  pool.on('error', (error) => options.onConnectionError?.(error));
  // The pool listens for a client's 'error' only while the client is idle. One in use (checked
  // out, between the statements of a transaction) whose connection dies (a failover,
  // pg_terminate_backend, ECONNRESET) emitted it with nobody listening, and the process crashed.
  // Here it needs no more: the statement under way, or the next one, fails with the error, and
  // the pool drops the client when it comes back.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return {
    db: new Kysely<Database>({
      dialect: new PostgresDialect({
        pool: withPreparedStatements(pool, options.onPreparedStatementsOff),
      }),
    }),
    pool,
  };
}

function openSqlite(path: string, options: { mustExist: boolean }): Kysely<Database> {
  if (options.mustExist && !existsSync(path)) throw new Error('there is no database file there');
  if (path !== ':memory:') ensureFolder(dirname(path));
  const sqlite = new SQLite(path, { fileMustExist: options.mustExist });
  sqlite.pragma('journal_mode = WAL');
  // In WAL mode NORMAL syncs at checkpoints rather than at every commit, which saves an fsync per
  // recorded check. A power cut of the host (not a crash of the process) may lose the last commits,
  // never corrupt the file: a lost decision is found again at the next check, and at worst an
  // announcement whose `sent` was lost is posted again.
  sqlite.pragma('synchronous = NORMAL');
  // No busy wait inside SQLite (it would block the event loop): the dialect waits between tries.
  sqlite.pragma('busy_timeout = 0');
  sqlite.pragma('foreign_keys = ON');
  return new Kysely<Database>({
    dialect: new PatientSqliteDialect(
      { database: withStatementCache(sqlite) },
      { maxWaitMs: SQLITE_LOCK_WAIT_MS },
    ),
  });
}

/**
 * Creates the folder and its missing parents one at a time (a recursive mkdir can spin for ever
 * under /proc), failing with the first folder that cannot be made.
 */
export function ensureFolder(dir: string): void {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a folder`);
    return;
  }
  const parent = dirname(dir);
  if (parent === dir) throw new Error(`${dir} does not exist`);
  ensureFolder(parent);
  try {
    mkdirSync(dir);
  } catch (error) {
    throw new Error(
      `cannot create the folder ${dir} (${(error as { code?: string }).code ?? error})`,
    );
  }
}
