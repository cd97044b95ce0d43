import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWebApiServer } from '../../src/sandbox/web-api-server.ts';
import { Workspace } from '../../src/sandbox/workspace.ts';
import { createSimulator } from '../../src/simulator/simulator.ts';
import { createApprovalStores } from '../../src/store/approval-stores.ts';
import { openDatabase } from '../../src/store/database.ts';
import { AppProcess, freePort } from '../helpers/app-process.ts';
import { SIGNING_SECRET, waitFor } from '../helpers/harness.ts';
import { sampleApproval } from '../helpers/outbox-seed.ts';

// SQLite belongs to one app process: waiting for another process's lock leaves the event loop
// free, and a second app process on the same file is refused with a word about Postgres.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sqlite-file-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Another process takes the write lock and holds it for `ms`; resolves once it holds it. */
async function holdWriteLock(path: string, ms: number): Promise<{ exited: Promise<unknown> }> {
  const script = `
    const db = new (require('better-sqlite3'))(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked');
    setTimeout(() => { db.exec('ROLLBACK'); db.close(); }, Number(process.argv[2]));`;
  const child = spawn(process.execPath, ['-e', script, path, String(ms)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve) => child.stdout?.once('data', resolve));
  return { exited };
}

describe('the SQLite file', { timeout: 240_000 }, () => {
  it('waits for another process’s write lock without stopping the event loop', async () => {
    const path = join(dir, 'approvals.db');
    const database = await openDatabase(path);
    try {
      const store = createApprovalStores(database.db, database.dialect);
      const locker = await holdWriteLock(path, 1500);
      // Timers keep firing while the write waits: the longest gap between ticks tells.
      let last = Date.now();
      let longest = 0;
      const ticker = setInterval(() => {
        longest = Math.max(longest, Date.now() - last);
        last = Date.now();
      }, 10);
      const started = Date.now();
      await store.createApproval(sampleApproval('LOCKEDxxxxxx'), new Date());
      const waited = Date.now() - started;
      clearInterval(ticker);
      await locker.exited;
      // The write went through once the lock was let go …
      expect(waited).toBeGreaterThan(1000);
      expect(await store.getApproval('LOCKEDxxxxxx')).toBeDefined();
      // … and the wait never held the event loop (SQLite's own busy wait blocked it throughout).
      expect(longest).toBeLessThan(500);
    } finally {
      await database.close();
    }
  });

  it('says the disk is full when a transaction fills it, not that there was no transaction to roll back', async () => {
    const database = await openDatabase(join(dir, 'approvals.db'));
    try {
      const store = createApprovalStores(database.db, database.dialect);
      // The file may grow no further: as a full disk, for SQLite.
      const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(database.db);
      await sql.raw(`pragma max_page_count = ${rows[0]?.page_count}`).execute(database.db);
      const writes = Array.from({ length: 50 }, (_, i) =>
        sampleApproval(`FULL${String(i).padStart(8, 'x')}`, {
          request: { title: 'x'.repeat(2000) },
        }),
      );
      const failed = await (async () => {
        for (const approval of writes) await store.createApproval(approval, new Date());
      })().then(
        () => undefined,
        (error: unknown) => error as { code?: string; message: string },
      );
      expect(failed?.code).toBe('SQLITE_FULL');
      expect(failed?.message).toBe('database or disk is full');
    } finally {
      await database.close();
    }
  });

  it('refuses a second app process on the same file, and lets a restart in once the first is gone', async () => {
    const path = join(dir, 'approvals.db');
    const sim = await createSimulator({ port: 0 });
    const workspace = new Workspace({
      people: sim.people.map((p) => ({ login: p.login, name: p.name, locale: 'en-US' })),
    });
    const api = await startWebApiServer(workspace);
    const app = async (database = path) =>
      new AppProcess({
        SLACK_BOT_TOKEN: workspace.botToken,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: api.apiUrl,
        PORT: String(await freePort()),
        APPROVAL_BASE_URL: sim.url,
        APPROVAL_APP_NAME: 'slack-approvals',
        APPROVAL_APP_KEY: 'sandbox-app-key',
        DATABASE_URL: database,
        LOG_LEVEL: 'warn',
      });
    const first = await app();
    try {
      await first.start();
      const second = await app();
      const refused = await second.start().then(
        () => 'started',
        (error: Error) => error.message,
      );
      await second.kill();
      expect(refused).toContain(
        `Another slack-approvals process is using the SQLite database ${path}`,
      );
      expect(refused).toContain('Postgres');
      // Another spelling of the same file (a symlink to it) is the same file.
      const alias = join(dir, 'alias.db');
      symlinkSync(path, alias);
      const throughAlias = await app(alias);
      const aliasRefused = await throughAlias.start().then(
        () => 'started',
        (error: Error) => error.message,
      );
      await throughAlias.kill();
      expect(aliasRefused).toContain(
        'Another slack-approvals process is using the SQLite database',
      );
      // kill -9 leaves no claim behind: the operating system drops it with the process.
      await first.kill();
      const restarted = await app();
      await restarted.start();
      expect(await restarted.stop()).toEqual({ code: 0, signal: null });
    } finally {
      await first.kill();
      await api.close();
      await sim.close();
    }
  }, 240_000);

  it('refuses a second sandbox in the same folder before it empties the running one’s file', async () => {
    const env = async () => ({ SANDBOX_DATA_DIR: dir, PORT: String(await freePort()) });
    const first = spawnSandbox(await env());
    try {
      await waitFor(
        () => first.output().includes('slack-approvals sandbox: open'),
        120_000,
        'the sandbox',
      );
      const file = join(dir, 'sandbox.db');
      const before = statSync(file).ino;
      const second = spawnSandbox(await env());
      expect(await second.exited).toBe(1);
      // Said once, with what lets a second sandbox run (test/start-hints.test.ts follows it).
      expect(second.output()).toContain(`Another sandbox is running in ${dir} (SANDBOX_DATA_DIR)`);
      expect(second.output().split('Another sandbox is running')).toHaveLength(2);
      // The running sandbox's file is the same file, not deleted and made anew.
      expect(statSync(file).ino).toBe(before);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  }, 240_000);
});

function spawnSandbox(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--sandbox'], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}
