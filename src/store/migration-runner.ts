import { type Kysely, PostgresAdapter, sql } from 'kysely';
import type { Migration } from 'kysely/migration';

// Runs migrations so that the release serving meanwhile never waits long for the schema's locks.
// Kysely's Migrator runs every pending migration in one transaction, so the first ALTER TABLE's
// ACCESS EXCLUSIVE lock is held across every later backfill and index build until the last commit
// (on a year of data, longer than the app's statement timeout). Here each migration is its own
// short transaction that gives up waiting for a lock quickly and tries again later, and the work
// that touches every row (index builds, backfills) runs outside it, in small steps.
//
// It shares Kysely's bookkeeping, so releases that run Kysely's Migrator and this one take turns
// on the same database: the same `kysely_migration` table and names, the same lock row, and the
// same session advisory lock on Postgres.

/**
 * A migration whose heavy part runs outside its transaction. `up` changes the schema in one short
 * transaction; `outside` then builds indexes and backfills rows in steps of their own, never
 * holding a lock for long. The migration is recorded once both are done, so `outside` (and, on
 * Postgres, `up`) must be safe to run again after a failure part-way. SQLite has one writer and no
 * concurrent index builds: there both run in one transaction.
 */
export interface StagedMigration extends Migration {
  outside?(db: Kysely<unknown>): Promise<void>;
}

/** Kysely's lock id (its PostgresAdapter), so its Migrator and this runner exclude each other. */
const KYSELY_MIGRATION_LOCK_ID = '3853314791062309107';
/**
 * How long a migration's statement waits for a lock before it gives up and lets the queue behind it
 * (the running release's requests) go on. Short, so those requests are answered within a second.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 500;
/**
 * A statement inside a migration's transaction may run this long (the app's own statement
 * timeout): longer, and the release serving meanwhile would time out waiting for it anyway.
 */
export const MIGRATION_STATEMENT_TIMEOUT_MS = 15_000;
/** Tries of a step that could not take its locks in time, with jittered backoff between them. */
export const MIGRATION_LOCK_TRIES = 8;

const LOCK_NOT_AVAILABLE = '55P03';
const DEADLOCK_DETECTED = '40P01';

export function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** A migration that failed: its name, and why. */
export class MigrationFailedError extends Error {
  /** The database's error code, when it gave one. */
  readonly code: string | undefined;
  constructor(
    readonly migrationName: string,
    cause: unknown,
  ) {
    super(
      `Database migration ${migrationName} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    const code = (cause as { code?: unknown }).code;
    this.code = typeof code === 'string' ? code : undefined;
  }
}

/**
 * Runs the migrations this database has not run, in name order, each in its own transaction, under
 * the migration lock (another replica migrating at the same time waits, then finds them done).
 * Returns the names it ran.
 */
export async function runPendingMigrations(
  db: Kysely<unknown>,
  migrations: Record<string, StagedMigration>,
): Promise<string[]> {
  return db.connection().execute(async (conn) => {
    const postgres = isPostgres(conn);
    if (postgres) await takeMigrationLock(conn);
    try {
      await ensureBookkeeping(conn);
      const done = new Set(
        (await sql<{ name: string }>`select name from kysely_migration`.execute(conn)).rows.map(
          (r) => r.name,
        ),
      );
      const pending = Object.keys(migrations)
        .sort()
        .filter((name) => !done.has(name));
      for (const name of pending) {
        try {
          await runOne(conn, name, migrations[name] as StagedMigration, postgres);
        } catch (error) {
          throw new MigrationFailedError(name, error);
        }
      }
      return pending;
    } finally {
      // A connection that died took its session's lock with it: the failure that killed it is told.
      if (postgres)
        await sql`select pg_advisory_unlock(${sql.lit(KYSELY_MIGRATION_LOCK_ID)})`
          .execute(conn)
          .catch(() => undefined);
    }
  });
}

/**
 * Waits for a migration under way elsewhere (up to an hour, as Kysely's Migrator does) by asking
 * again and again, never by waiting inside one statement: a waiting statement holds a snapshot,
 * and the other's CREATE INDEX CONCURRENTLY waits for every older snapshot to end (a deadlock).
 */
async function takeMigrationLock(conn: Kysely<unknown>): Promise<void> {
  const giveUpAt = Date.now() + 3_600_000;
  for (;;) {
    const taken = await sql<{
      taken: boolean;
    }>`select pg_try_advisory_lock(${sql.lit(KYSELY_MIGRATION_LOCK_ID)}) as taken`.execute(conn);
    if (taken.rows[0]?.taken) return;
    if (Date.now() > giveUpAt)
      throw new Error('another migration has held the migration lock for an hour');
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
  }
}

async function runOne(
  conn: Kysely<unknown>,
  name: string,
  migration: StagedMigration,
  postgres: boolean,
): Promise<void> {
  if (!postgres) {
    // One writer: nobody else runs meanwhile, and the whole migration stays atomic.
    await conn.transaction().execute(async (trx) => {
      await migration.up(trx);
      await migration.outside?.(trx);
      await record(trx, name);
    });
    return;
  }
  await inShortTransaction(conn, async (trx) => {
    await migration.up(trx);
    if (!migration.outside) await record(trx, name);
  });
  if (migration.outside) {
    await migration.outside(conn);
    await inShortTransaction(conn, (trx) => record(trx, name));
  }
}

function record(db: Kysely<unknown>, name: string) {
  return sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
    db,
  );
}

/**
 * Runs `work` in a transaction whose statements wait at most MIGRATION_LOCK_TIMEOUT_MS for a lock
 * and run at most MIGRATION_STATEMENT_TIMEOUT_MS (on Postgres); a lock not had in time (or a
 * deadlock, which Postgres resolves by failing one side) rolls back and is tried again later, up to
 * MIGRATION_LOCK_TRIES times. On SQLite a plain transaction (its driver waits for the file's lock).
 */
export async function inShortTransaction<T>(
  db: Kysely<unknown>,
  work: (trx: Kysely<unknown>) => Promise<T>,
): Promise<T> {
  // SQLite: a migration's whole run is already one transaction (runOne).
  if (!isPostgres(db)) return db.isTransaction ? work(db) : db.transaction().execute(work);
  return withLockRetries(() =>
    db.transaction().execute(async (trx) => {
      await sql`select set_config('lock_timeout', ${`${MIGRATION_LOCK_TIMEOUT_MS}ms`}, true),
          set_config('statement_timeout', ${`${MIGRATION_STATEMENT_TIMEOUT_MS}ms`}, true)`.execute(
        trx,
      );
      return work(trx);
    }),
  );
}

/**
 * Runs `work` again after a lock not had in time or a deadlock (Postgres fails one side of it), up
 * to MIGRATION_LOCK_TRIES times with jittered backoff; then fails saying so.
 */
async function withLockRetries<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code !== LOCK_NOT_AVAILABLE && code !== DEADLOCK_DETECTED) throw error;
      if (attempt >= MIGRATION_LOCK_TRIES)
        throw new Error(
          `could not take its locks within ${MIGRATION_LOCK_TIMEOUT_MS} ms in ${attempt} tries (a long transaction holds them; see pg_stat_activity): ${String(error)}`,
          { cause: error },
        );
      await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
    }
  }
}

/** 250 ms doubling to 8 s, each drawn between half and all of it. */
function backoffMs(attempt: number): number {
  const ceiling = Math.min(250 * 2 ** (attempt - 1), 8_000);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Kysely's two tables and its lock row, as its Migrator makes them. */
async function ensureBookkeeping(db: Kysely<unknown>): Promise<void> {
  await sql`create table if not exists kysely_migration (
      name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(db);
  await sql`create table if not exists kysely_migration_lock (
      id varchar(255) not null primary key, is_locked integer not null default 0)`.execute(db);
  await sql`insert into kysely_migration_lock (id, is_locked) values ('migration_lock', 0)
    on conflict (id) do nothing`.execute(db);
}

/**
 * Builds an index without blocking writes: on Postgres CONCURRENTLY, outside any transaction, after
 * dropping what a build that failed part-way left (an invalid index of that name); on SQLite a
 * plain build. `definition` is what follows `on`: `table (columns)`.
 */
export async function buildIndex(
  db: Kysely<unknown>,
  name: string,
  definition: string,
): Promise<void> {
  if (!isPostgres(db)) {
    await sql`create index if not exists ${sql.id(name)} on ${sql.raw(definition)}`.execute(db);
    return;
  }
  // A deadlock (with a schema change elsewhere) fails the build and leaves it invalid: again.
  await withLockRetries(async () => {
    const invalid = await sql<{ valid: boolean }>`select i.indisvalid as valid from pg_index i
        join pg_class c on c.oid = i.indexrelid
        where c.relname = ${name} and c.relnamespace = current_schema()::regnamespace`.execute(db);
    if (invalid.rows.some((r) => !r.valid))
      await sql`drop index concurrently if exists ${sql.id(name)}`.execute(db);
    await sql`create index concurrently if not exists ${sql.id(name)} on ${sql.raw(definition)}`.execute(
      db,
    );
  });
}

/** Drops an index without blocking reads or writes (CONCURRENTLY on Postgres). */
export async function dropIndex(db: Kysely<unknown>, name: string): Promise<void> {
  await withLockRetries(() =>
    sql`drop index ${sql.raw(isPostgres(db) ? 'concurrently' : '')} if exists ${sql.id(name)}`.execute(
      db,
    ),
  );
}

/**
 * Runs `step` over the approvals in djbh order, `batchSize` at a time, each batch its own short
 * transaction that locks those approvals' rows first (the one lock order: an approval's row, then
 * its announcements) and gets the range `(after, upTo]` to change.
 */
export async function inApprovalBatches(
  db: Kysely<unknown>,
  batchSize: number,
  step: (trx: Kysely<unknown>, after: string, upTo: string) => Promise<void>,
): Promise<void> {
  let after = '';
  for (;;) {
    const upTo = await inShortTransaction(db, async (trx) => {
      const rows = await sql<{ djbh: string }>`select djbh from tracked_approvals
          where djbh > ${after} order by djbh limit ${batchSize}
          ${sql.raw(isPostgres(trx) ? 'for no key update' : '')}`.execute(trx);
      const last = rows.rows.at(-1)?.djbh;
      if (last !== undefined) await step(trx, after, last);
      return last;
    });
    if (upTo === undefined) return;
    after = upTo;
  }
}
