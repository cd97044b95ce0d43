import { existsSync } from 'node:fs';
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
 * go on writing: SQLite's online backup API (through the driver) copies page by page and starts
 * over where a write changed a page already copied, so the copy is one committed state — unlike
 * `cp` of a WAL-mode file, which can take the main file and its `-wal` from different moments.
 * Never overwrites; checks the copy's integrity before answering.
 */
export async function backupSqlite(source: string, target: string): Promise<BackupResult> {
  const from = resolve(source);
  const to = resolve(target);
  if (!existsSync(from)) throw new BackupError(`there is no database at ${from}`);
  if (existsSync(to)) throw new BackupError(`${to} exists already; name a new file`);
  // Read-only: a backup must never migrate, create or change what it copies.
  const db = new SQLite(from, { readonly: true, fileMustExist: true });
  try {
    const { totalPages } = await db.backup(to);
    const copy = new SQLite(to, { readonly: true, fileMustExist: true });
    try {
      const check = copy.pragma('integrity_check', { simple: true });
      if (check !== 'ok') throw new BackupError(`the copy at ${to} failed its check: ${check}`);
    } finally {
      copy.close();
    }
    return { target: to, pages: totalPages };
  } catch (error) {
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
