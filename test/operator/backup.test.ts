import { execFile, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlackRequester } from '../../src/sandbox/slack-requests.ts';
import { startWebApiServer, type WebApiServer } from '../../src/sandbox/web-api-server.ts';
import { Workspace } from '../../src/sandbox/workspace.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';
import { backupSqlite } from '../../src/store/backup.ts';
import { AppProcess, freePort } from '../helpers/app-process.ts';
import { SIGNING_SECRET, waitFor } from '../helpers/harness.ts';

// `npm run backup` against the running app's SQLite file while it writes, then a restore: the
// app starts on the copy and goes on with what it held.

const root = new URL('../..', import.meta.url).pathname;
const exec = promisify(execFile);
const backup = (env: Record<string, string>, ...args: string[]) =>
  exec(process.execPath, ['--import', 'tsx', 'src/operator/backup-cli.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, out: stdout + stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      out: e.stdout + e.stderr,
    }),
  );

let sim: Simulator;
let workspace: Workspace;
let api: WebApiServer;
let dir: string;

beforeEach(async () => {
  sim = await createSimulator({ port: 0 });
  workspace = new Workspace({
    people: sim.people.map((p) => ({ login: p.login, name: p.name, locale: 'en-US' })),
  });
  api = await startWebApiServer(workspace);
  dir = mkdtempSync(join(tmpdir(), 'slack-approvals-backup-'));
});

afterEach(async () => {
  await api.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

async function appOn(database: string) {
  const port = await freePort();
  const app = new AppProcess({
    SLACK_BOT_TOKEN: workspace.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: api.apiUrl,
    PORT: String(port),
    APPROVAL_BASE_URL: sim.url,
    APPROVAL_APP_NAME: 'slack-approvals',
    APPROVAL_APP_KEY: 'sandbox-app-key',
    DATABASE_URL: database,
    STATUS_POLL_CRON: '* * * * * *',
    LOG_LEVEL: 'warn',
    // The copy holds the leases of attempts the first app had under way when it was made; in a
    // real restore they ran out long ago, here they must run out within the test.
    ANNOUNCEMENT_LEASE_SECONDS: '3',
    SLACK_TIMEOUT_MS: '1000',
  });
  const slack = new SlackRequester({
    workspace,
    eventsUrl: `http://127.0.0.1:${port}/slack/events`,
    signingSecret: SIGNING_SECRET,
    responseOrigin: api.origin,
  });
  await app.start();
  return { app, slack };
}

async function request(slack: SlackRequester, title: string) {
  const sam = workspace.userByLogin('sam.taylor@corp.example').id;
  const before = new Set(workspace.views.keys());
  await slack.command(sam, workspace.channelByName('general').id, title);
  const view = await waitFor(() =>
    [...workspace.views.values()].find(
      (v) => !before.has(v.id) && JSON.stringify(v.view).includes('Suggested approver'),
    ),
  );
  await slack.submitView(view.id, { note_input: 'n' });
}

const approvedReplies = () =>
  workspace.messages.filter((m) => m.threadTs && m.text.includes('Approved')).length;

const trackedIn = (file: string) => {
  const db = new SQLite(file, { readonly: true });
  try {
    return (db.prepare('select djbh from tracked_approvals').all() as { djbh: string }[]).map(
      (r) => r.djbh,
    );
  } finally {
    db.close();
  }
};

describe('npm run backup', { timeout: 240_000 }, () => {
  it('copies the database while the app writes, and the app starts on the restored copy and goes on', async () => {
    const live = join(dir, 'approvals.db');
    const { app, slack } = await appOn(live);
    try {
      await request(slack, 'Before the backup');
      const first = await waitFor(() => sim.approvals()[0]);
      sim.decide(first.djbh, 'agree');
      await waitFor(() => approvedReplies() === 1, 120_000, 'the first decision');
      // Submissions go on while the copy is made: the copy must be one committed state.
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing && i < 20; i++) await request(slack, `During the backup ${i}`);
      })();
      const copy = join(dir, 'copy.db');
      const result = await backup({ DATABASE_URL: live }, copy);
      writing = false;
      await writer;
      expect(result, result.out).toMatchObject({ code: 0 });
      expect(result.out).toMatch(/Backed up .* checked/);
      expect(trackedIn(copy)).toContain(first.djbh);

      // Restore: the app stopped, the copy in place of the database (no -wal/-shm beside it).
      await app.stop();
      const restored = join(dir, 'restored.db');
      copyFileSync(copy, restored);
      const again = await appOn(restored);
      try {
        // What the copy holds undelivered goes out: every approval it knows gets its request.
        const inCopy = trackedIn(copy);
        await waitFor(
          () =>
            inCopy.every((djbh) =>
              workspace.messages.some((m) => !m.threadTs && m.text.includes(djbh)),
            ),
          30_000,
          'the requests the copy held',
        );
        await request(again.slack, 'After the restore');
        const next = await waitFor(() =>
          sim.approvals().find((a) => a.title === 'After the restore'),
        );
        sim.decide(next.djbh, 'agree');
        await waitFor(() => approvedReplies() === 2, 120_000, 'a decision on the restored copy');
        // The ended approval came back ended: its decision is not announced again.
        await new Promise((r) => setTimeout(r, 1500));
        expect(approvedReplies()).toBe(2);
      } finally {
        await again.app.stop();
      }
    } finally {
      await app.kill();
    }
  }, 240_000);

  it('refuses to overwrite, names a missing database, and sends Postgres to pg_dump', async () => {
    const existing = join(dir, 'exists.db');
    writeFileSync(existing, '');
    const absent = join(dir, 'absent.db');
    expect(await backup({ DATABASE_URL: absent }, join(dir, 'b.db'))).toMatchObject({
      code: 1,
      out: expect.stringContaining(`there is no database at ${absent}`),
    });
    // Nothing was created where the database was said to be.
    expect(existsSync(absent)).toBe(false);
    const live = join(dir, 'live.db');
    new SQLite(live).close();
    expect(await backup({ DATABASE_URL: live }, existing)).toMatchObject({
      code: 1,
      out: expect.stringContaining('exists already'),
    });
    expect(
      await backup({ DATABASE_URL: 'postgres://u:secret@127.0.0.1:1/x' }, join(dir, 'c.db')),
    ).toMatchObject({ code: 2, out: expect.stringContaining('pg_dump') });
    expect((await backup({ DATABASE_URL: live })).out).toContain('Usage:');
  });

  it('never replaces a file created at the target while it was copying', async () => {
    const live = join(dir, 'live.db');
    const db = new SQLite(live);
    db.exec('create table t (id integer primary key)');
    db.close();
    const target = join(dir, 'raced.db');
    await expect(
      backupSqlite(live, target, {
        copied: () => writeFileSync(target, 'another backup, written meanwhile'),
      }),
    ).rejects.toThrow(`${target} exists already; name a new file`);
    expect(readFileSync(target, 'utf8')).toBe('another backup, written meanwhile');
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
  });

  it('finishes on a large database another process keeps writing, and leaves only the copy', async () => {
    const live = join(dir, 'big.db');
    const db = new SQLite(live);
    db.pragma('journal_mode = WAL');
    db.exec('create table t (id integer primary key, body blob)');
    const insert = db.prepare('insert into t (body) values (?)');
    db.transaction(() => {
      for (let i = 0; i < 6000; i++) insert.run(Buffer.alloc(4000, i % 251));
    })();
    db.close();
    // A writer that never lets up: copied in small steps, each of its writes would restart the
    // copy, and the backup would never end.
    const writer = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(process.argv[1]);
         const insert = db.prepare('insert into t (body) values (?)');
         setInterval(() => insert.run(Buffer.alloc(4000, 7)), 5);`,
        live,
      ],
      { cwd: root, stdio: 'ignore' },
    );
    try {
      await new Promise((r) => setTimeout(r, 300));
      const copy = join(dir, 'big-copy.db');
      const result = await backup({ DATABASE_URL: live }, copy);
      expect(result, result.out).toMatchObject({ code: 0 });
      const rows = new SQLite(copy, { readonly: true });
      expect((rows.prepare('select count(*) n from t').get() as { n: number }).n).toBeGreaterThan(
        6000,
      );
      rows.close();
      expect(readdirSync(dir).filter((f) => f.startsWith('big-copy'))).toEqual(['big-copy.db']);
    } finally {
      writer.kill();
    }
  }, 240_000);
});
