import { existsSync, renameSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { AppError } from '../errors.ts';

/** What a backup wrote, for the operator's one line. */
export interface BackupResult {
  target: string;
  pages: number;
}

/**
 * Copies the SQLite database at `source` into a new file `target`, consistently, while the app may
 * go on writing: SQLite's online backup API (through the driver) copies it as one committed state,
 * unlike `cp` of a WAL-mode file, which can take the main file and its `-wal` from different
 * moments. The copy is made in one step (one read transaction): copied in small steps, every write
 * of the app in between would start it over, and on a large, busy database it would never end.
 * The copy is written beside the target and renamed into place once checked, so a failed backup
 * leaves nothing behind, and it needs no `-wal` of its own. Never overwrites.
 */
export async function backupSqlite(source: string, target: string): Promise<BackupResult> {
  const from = resolve(source);
  const to = resolve(target);
  if (!existsSync(from)) throw new BackupError(`there is no database at ${from}`);
  if (existsSync(to)) throw new BackupError(`${to} exists already; name a new file`);
  const partial = `${to}.partial-${process.pid}`;
  const removePartial = () => {
    for (const suffix of ['', '-wal', '-shm', '-journal'])
      rmSync(`${partial}${suffix}`, { force: true });
  };
  // Read-only: a backup must never migrate, create or change what it copies.
  const db = new SQLite(from, { readonly: true, fileMustExist: true });
  try {
    const { totalPages } = await db.backup(partial, { progress: () => 0x7fffffff });
    const copy = new SQLite(partial, { fileMustExist: true });
    try {
      // A restored copy opens as a plain file; the app puts it back in WAL mode when it starts.
      copy.pragma('journal_mode = DELETE');
      const check = copy.pragma('integrity_check', { simple: true });
      if (check !== 'ok') throw new BackupError(`the copy failed its check: ${check}`);
    } finally {
      copy.close();
    }
    renameSync(partial, to);
    return { target: to, pages: totalPages };
  } catch (error) {
    removePartial();
    if (error instanceof BackupError) throw error;
    throw new BackupError(`could not copy ${from} to ${to}: ${(error as Error).message}`, error);
  } finally {
    db.close();
  }
}

/** A backup could not be made; the message says why in one line. */
export class BackupError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('backup_failed', message, { cause });
  }
}
