import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  type AbortableOperationOptions,
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  type TransactionSettings,
} from 'kysely';
import { AppError } from '../errors.ts';

// SQLite is one file that one app process owns. Two things make that safe to run:
// - waiting for a lock never blocks the event loop: better-sqlite3 is synchronous, and SQLite's
//   own busy handler sleeps inside the call, so another process holding the write lock froze
//   every timer and every answer to Slack for up to the busy timeout. Here SQLite gives up at
//   once and the wait happens between tries, asynchronously;
// - a second app process on the same file is refused at start: replicas need Postgres.

/** The file is taken by another app process. */
export class SqliteInUseError extends AppError {
  constructor(path: string) {
    super(
      'sqlite_in_use',
      `Another slack-approvals process is using the SQLite database ${path}. SQLite serves one process; to run several replicas, give them one Postgres database (DATABASE_URL=postgres://…).`,
    );
  }
}

const claims = new Map<string, { lock: SQLite.Database; holders: number }>();

/**
 * Claims the database file for this process: an exclusive transaction held open on a lock file
 * beside it (`<file>.app-lock`). The operating system drops it when the process ends, however it
 * ends (kill -9 included), so a restart never finds a stale claim. Apps in one process (tests)
 * share the claim. Returns the release.
 */
export function claimSqliteFile(given: string): () => void {
  // By the file's real path: a symlink or another spelling of the same file claims the same lock.
  const path = realPathOf(given);
  const held = claims.get(path);
  if (held) {
    held.holders++;
    return () => release(path);
  }
  const lock = new SQLite(`${path}.app-lock`);
  try {
    lock.pragma('busy_timeout = 0');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    lock.close();
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') throw new SqliteInUseError(given);
    throw error;
  }
  claims.set(path, { lock, holders: 1 });
  return () => release(path);
}

/** The real path of the file (or, before it exists, of its folder, with its name). */
function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

function release(path: string): void {
  const held = claims.get(path);
  if (!held || --held.holders > 0) return;
  claims.delete(path);
  held.lock.close();
}

// SQLite's words when ROLLBACK finds the transaction already rolled back.
const NO_TRANSACTION = /^cannot rollback - no transaction is active$/;

export interface Patience {
  /** Give up (the query fails with SQLITE_BUSY) after waiting this long in all. */
  maxWaitMs: number;
}

/**
 * Kysely's SQLite dialect, waiting for another process's write lock without blocking: a query
 * answered SQLITE_BUSY is tried again after 1, 2, 4 … (at most 50) ms, asynchronously, until
 * `maxWaitMs` has passed. Transactions begin IMMEDIATE, taking the write lock at their start (the
 * one moment a wait can be retried safely) instead of failing halfway through.
 */
export class PatientSqliteDialect extends SqliteDialect {
  constructor(
    config: SqliteDialectConfig,
    private readonly patience: Patience,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new PatientDriver(super.createDriver(), this.patience);
  }
}

class PatientDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly patience: Patience,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new PatientConnection(await this.inner.acquireConnection(), this.patience);
  }

  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings) {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  /**
   * After some errors (a full disk, an I/O error) SQLite has rolled the transaction back itself;
   * a ROLLBACK then fails with "no transaction is active", and Kysely would throw that in place
   * of the error that says what happened (SQLITE_FULL: "database or disk is full").
   */
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.rollbackTransaction(connection);
    } catch (error) {
      if (!NO_TRANSACTION.test(error instanceof Error ? error.message : '')) throw error;
    }
  }

  // Savepoints are statements on the connection, retried like any other.
  savepoint: Driver['savepoint'] = (connection, name, compile) =>
    this.inner.savepoint?.(connection, name, compile) ?? Promise.resolve();
  rollbackToSavepoint: Driver['rollbackToSavepoint'] = (connection, name, compile) =>
    this.inner.rollbackToSavepoint?.(connection, name, compile) ?? Promise.resolve();
  releaseSavepoint: Driver['releaseSavepoint'] = (connection, name, compile) =>
    this.inner.releaseSavepoint?.(connection, name, compile) ?? Promise.resolve();

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection((connection as PatientConnection).inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

class PatientConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly patience: Patience,
  ) {}

  async executeQuery<R>(
    query: CompiledQuery,
    options?: AbortableOperationOptions,
  ): Promise<QueryResult<R>> {
    const started = Date.now();
    for (let wait = 1; ; wait = Math.min(50, wait * 2)) {
      try {
        return await this.inner.executeQuery<R>(query, options);
      } catch (error) {
        const busy = (error as { code?: unknown }).code === 'SQLITE_BUSY';
        if (!busy || Date.now() - started + wait > this.patience.maxWaitMs) throw error;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  streamQuery<R>(
    query: CompiledQuery,
    chunkSize: number,
    options?: AbortableOperationOptions,
  ): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize, options);
  }
}

/**
 * better-sqlite3 with its prepared statements kept, the most recently used `size` of them. Kysely
 * prepares every query it runs; preparing cost about a tenth of a status check's CPU, and each
 * statement holds native memory until the garbage collector finds it, which a sweep of 10,000
 * checks grew to hundreds of MB. The app's queries are a few dozen texts, so nearly every one is
 * found here. A statement still being iterated (a streamed query) is never handed out twice.
 */
export function withStatementCache(sqlite: SQLite.Database, size = 256): SqliteDatabase {
  const kept = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text) {
      const found = kept.get(text);
      if (found && !found.busy) {
        // Most recently used last: the first entry is the one to drop.
        kept.delete(text);
        kept.set(text, found);
        return found;
      }
      const prepared = sqlite.prepare(text);
      kept.set(text, prepared);
      if (kept.size > size) kept.delete(kept.keys().next().value as string);
      return prepared;
    },
  };
}
