import { constants, copyFileSync, existsSync, linkSync, rmSync } from 'node:fs';
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
 * The copy is written beside the target and put in place once checked, so a failed backup
 * leaves nothing behind, and it needs no `-wal` of its own. Never overwrites, even a file created
 * at the target during the copy: the copy is put in place with link(), which fails when the name
 * exists (a rename would replace it).
 */
export async function backupSqlite(
  source: string,
  target: string,
  /** `copied` runs once the copy is checked, before it is put in place (tests race it there). */
  hooks: { copied?: () => void } = {},
): Promise<BackupResult> {
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
    hooks.copied?.();
    placeWithoutReplacing(partial, to);
    rmSync(partial, { force: true });
    return { target: to, pages: totalPages };
  } catch (error) {
    removePartial();
    if (error instanceof BackupError) throw error;
    throw new BackupError(`could not copy ${from} to ${to}: ${(error as Error).message}`, error);
  } finally {
    db.close();
  }
}

/**
 * Gives the file at `from` the name `to` only while nothing has that name: a hard link where the
 * filesystem has them, else a copy opened with O_EXCL (COPYFILE_EXCL). Either fails when `to`
 * exists, however late it appeared.
 */
function placeWithoutReplacing(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new BackupError(`${to} exists already; name a new file`, error);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV')
      throw error;
    try {
      copyFileSync(from, to, constants.COPYFILE_EXCL);
    } catch (copyError) {
      if ((copyError as NodeJS.ErrnoException).code === 'EEXIST')
        throw new BackupError(`${to} exists already; name a new file`, copyError);
      throw copyError;
    }
  }
}

/** A backup could not be made; the message says why in one line. */
export class BackupError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('backup_failed', message, { cause });
  }
}
