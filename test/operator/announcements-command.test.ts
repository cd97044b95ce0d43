import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { announcementsCommand } from '../../src/operator/announcements-command.ts';
import { announcementStates } from '../../src/store/announcement-states.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { approvalStory } from '../../src/store/approval-story.ts';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { harnessPerTest } from '../helpers/harness.ts';
import { sampleApproval } from '../helpers/outbox-seed.ts';

const T0 = new Date('2026-11-22T08:00:00Z');
let dir: string;
let db: DatabaseHandle;
let store: ApprovalStores;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'operator-'));
  db = await openDatabase(join(dir, 'a.db'));
  store = createApprovalStores(db.db, db.dialect);
  await store.createApproval(
    sampleApproval('AAAAAAAAAAAa', { teamId: 'T', request: { createdAt: T0 } }),
    T0,
  );
  const request = (await store.pendingAnnouncements(10)).find((a) => a.kind === 'request');
  const claim = request && (await store.claimAnnouncement(request, T0, 60_000));
  if (!claim) throw new Error('no claim');
  await store.markAnnouncementFinal(claim, 'failed', 'Slack: invalid_blocks');
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[]) {
  const lines: string[] = [];
  const code = await announcementsCommand(args, {
    store,
    states: (ids: readonly string[]) => announcementStates(db.db, ids),
    story: (djbh: string) => approvalStory(db.db, djbh),
    now: () => T0,
    out: (l) => lines.push(l),
  });
  return { code, lines };
}

describe('npm run announcements', { timeout: 240_000 }, () => {
  it('lists failed announcements with their reason', async () => {
    const { code, lines } = await run(['failed']);
    expect(code).toBe(0);
    expect(lines[0]).toBe('1 failed announcement');
    expect(lines[1]).toContain('AAAAAAAAAAAa:request');
    expect(lines[1]).toContain('Slack: invalid_blocks');
  });

  it('re-drives the failed announcements named, or all of them', async () => {
    expect((await run(['redrive', 'AAAAAAAAAAAa:other'])).lines).toEqual([
      '0 announcements pending again',
      'Unknown id, no such announcement: AAAAAAAAAAAa:other (`npm run announcements -- failed` lists the failed ones with their ids)',
    ]);
    expect((await run(['redrive', '--all'])).lines).toEqual(['1 announcement pending again']);
    expect((await store.pendingAnnouncements(10)).map((a) => a.id)).toContain(
      'AAAAAAAAAAAa:request',
    );
    expect((await run(['failed'])).lines[0]).toBe('0 failed announcements');
  });

  it('says which ids are unknown and fails when none was re-driven because of them', async () => {
    const unknown = await run(['redrive', '999']);
    expect(unknown.lines).toEqual([
      '0 announcements pending again',
      'Unknown id, no such announcement: 999 (`npm run announcements -- failed` lists the failed ones with their ids)',
    ]);
    expect(unknown.code).toBe(1);

    // One known failed id among them is re-driven; the unknown one is still named.
    const mixed = await run(['redrive', 'AAAAAAAAAAAa:request', '998']);
    expect(mixed.lines[0]).toBe('1 announcement pending again');
    expect(mixed.lines[1]).toContain('Unknown id, no such announcement: 998');
    expect(mixed.code).toBe(0);

    // Now pending, not failed: named as such, and not an error.
    const again = await run(['redrive', 'AAAAAAAAAAAa:request']);
    expect(again.lines).toEqual([
      '0 announcements pending again',
      'Not failed, left as it is: AAAAAAAAAAAa:request (pending)',
    ]);
    expect(again.code).toBe(0);
  });

  it('explains its usage when the words are off', async () => {
    const { code, lines } = await run(['redrive']);
    expect(code).toBe(2);
    expect(lines.join('\n')).toContain('npm run announcements -- failed');
  });

  it('runs as npm run announcements on the database DATABASE_URL names', async () => {
    const { stdout } = await promisify(execFile)(
      'npm',
      ['run', '-s', 'announcements', '--', 'failed'],
      {
        env: { ...process.env, DATABASE_URL: join(dir, 'a.db') },
      },
    );
    expect(stdout).toContain('AAAAAAAAAAAa:request');
    // npm test builds dist/ first; run alone, this compiles it when the sources changed.
  }, 240_000);

  it('never creates a database, and never migrates one: only the app does', async () => {
    const exec = promisify(execFile);
    const absent = join(dir, 'typo', 'approvals.db');
    const refused = await exec('npm', ['run', '-s', 'announcements', '--', 'failed'], {
      env: { ...process.env, DATABASE_URL: absent },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(refused).toMatchObject({ code: 1 });
    expect((refused as { stderr: string }).stderr).toContain(
      `Could not open the database at ${absent}`,
    );
    expect(existsSync(absent)).toBe(false);
    expect(existsSync(join(dir, 'typo'))).toBe(false);
    // A database one migration behind (an older release made it) stays as it is.
    await sql`delete from kysely_migration where name = '2026-11-23-007-job-runs'`.execute(db.db);
    await sql`drop table job_runs`.execute(db.db);
    const { stdout } = await exec('npm', ['run', '-s', 'announcements', '--', 'failed'], {
      env: { ...process.env, DATABASE_URL: join(dir, 'a.db') },
    });
    expect(stdout).toContain('1 failed announcement');
    const names = await sql<{ name: string }>`select name from kysely_migration`.execute(db.db);
    expect(names.rows.map((r) => r.name)).not.toContain('2026-11-23-007-job-runs');
  }, 240_000);
});

describe('npm run announcements -- story', { timeout: 240_000 }, () => {
  const harness = harnessPerTest();
  const exec = promisify(execFile);

  it('tells one approval’s story, started and decided through the app: its facts, then each announcement with its state and times', async () => {
    const h = await harness();
    const { approval } = await h.startApproval('alex.kim@corp.example');
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    const { stdout } = await exec(
      'npm',
      ['run', '-s', 'announcements', '--', 'story', approval.djbh],
      {
        env: { ...process.env, DATABASE_URL: h.env.DATABASE_URL },
      },
    );
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe(`Approval ${approval.djbh}: New storage node`);
    expect(stdout).toMatch(
      /requested\t\d{4}-\d\d-\d\dT.* by alex\.kim@corp\.example \(U\w+\) in C\w+/,
    );
    expect(stdout).toMatch(/approver\tliu\.yang@corp\.example \(U\w+\)/);
    expect(stdout).toContain('decision\tapproved by liu.yang@corp.example');
    expect(stdout).toContain('following\tfinished');
    const announcements = lines.slice(lines.findIndex((l) => / announcements \(/.test(l)) + 1);
    // In recorded order: the request and the approver's DM (recorded together) first, the
    // decision after them; every one sent at its first attempt.
    const ids = announcements.map((l) => l.split('\t')[1]);
    expect(ids.slice(0, 2).sort()).toEqual([
      `${approval.djbh}:approver-dm`,
      `${approval.djbh}:request`,
    ]);
    expect(ids.indexOf(`${approval.djbh}:decision:approved`)).toBeGreaterThan(1);
    for (const line of announcements) {
      const [recorded, , state, attempts, attempted, where] = line.trim().split('\t');
      expect(recorded).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(state).toBe('sent');
      expect(attempts).toBe('1 attempt(s)');
      expect(attempted).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(where).toMatch(/^(D|C)\w+ \d+\.\d+$/);
    }
  }, 240_000);

  it('says when the number is unknown, with exit code 1', async () => {
    const unknown = await run(['story', 'nosuchnumber']);
    expect(unknown.code).toBe(1);
    expect(unknown.lines[0]).toContain('No approval nosuchnumber here');
    const known = await run(['story', 'AAAAAAAAAAAa']);
    expect(known.code).toBe(0);
    expect(known.lines.find((l) => l.includes('AAAAAAAAAAAa:request'))).toContain(
      'failed\t1 attempt(s)',
    );
    expect(known.lines.find((l) => l.includes('AAAAAAAAAAAa:request'))).toContain(
      'Slack: invalid_blocks',
    );
  });

  it('answers --help without a database', async () => {
    const { stdout } = await exec('npm', ['run', '-s', 'announcements', '--', 'story', '--help'], {
      env: { ...process.env, DATABASE_URL: join(dir, 'nowhere', 'x.db') },
    });
    expect(stdout).toContain('npm run announcements -- story <djbh>');
  }, 240_000);
});

describe('npm run announcements -- story, with text someone typed', { timeout: 240_000 }, () => {
  it('writes a title’s line breaks, tabs and escape sequences as escapes, so they cannot forge lines', async () => {
    await store.createApproval(
      sampleApproval('BBBBBBBBBBBb', {
        teamId: 'T',
        request: {
          createdAt: T0,
          title: 'Laptop\n  decision\tapproved by ceo@corp.example\r\u001b[2J\u2028x',
        },
      }),
      T0,
    );
    const { code, lines } = await run(['story', 'BBBBBBBBBBBb']);
    expect(code).toBe(0);
    expect(lines[0]).toBe(
      'Approval BBBBBBBBBBBb: Laptop\\n  decision\\tapproved by ceo@corp.example\\r\\u{1b}[2J\\u{2028}x',
    );
    expect(lines.filter((l) => l.includes('decision'))).toHaveLength(2);
    expect(lines.find((l) => l.startsWith('  decision'))).toBe('  decision\tpending');
    for (const line of lines)
      for (const c of ['\r', '\n', '\u001b', '\u2028']) expect(line).not.toContain(c);
  });
});
