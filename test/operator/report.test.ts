import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ageBandOf } from '../../src/approvals/approval-report.ts';
import { createApprovalStores } from '../../src/store/approval-stores.ts';
import { createMetricsSource } from '../../src/store/metrics-source.ts';
import { streamApprovalRecords } from '../../src/store/report-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { seedReported } from '../helpers/report-seed.ts';

// `npm run report` as an operator runs it: the compiled command, on a database of each dialect
// the app recorded approvals in through its own store.

const exec = promisify(execFile);
const HOSTILE = '=HYPERLINK("http://evil.example","click")';

/** The compiled command's answer, with only the settings given (no .env, no Slack, no service). */
async function report(url: string, args: string[]) {
  return exec('npm', ['run', '-s', 'report', '--', ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/',
      DATABASE_URL: url,
      WORKING_HOURS: '09:00-18:00',
      WORKING_DAYS: 'mon-fri',
      WORKING_TIME_ZONE: 'UTC',
    },
  })
    .then((r) => ({ ...r, code: 0 }))
    .catch((e: { code: number; stdout: string; stderr: string }) => e);
}

/** RFC 4180 lines without line breaks inside fields (none here), split on commas outside quotes. */
function parseCsv(text: string): string[][] {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)].map((m) => m[1] ?? ''))
    .map((fields) =>
      fields
        .slice(0, -1)
        .map((f) => (f.startsWith('"') ? f.slice(1, -1).replaceAll('""', '"') : f)),
    );
}

for (const which of TEST_DATABASES) {
  describe.skipIf(which.skipReason)(`npm run report on ${which.name}`, () => {
    let database: Awaited<ReturnType<typeof openTestDatabase>>;
    beforeAll(async () => {
      database = await openTestDatabase(which);
      const store = createApprovalStores(database.handle.db, database.handle.dialect);
      // Monday 2 November 2026, 09:00 UTC: decided at 11:30, two and a half working hours.
      await seedReported(
        store,
        'RPT000000001',
        {
          request: {
            template: { id: 'tpl-1', name: 'Laptop' },
            createdAt: new Date('2026-11-02T09:00:00Z'),
            title: HOSTILE,
            note: 'Line one, "quoted"',
          },
          parties: {
            requester: { login: 'sam@corp.example', slackId: 'U0SAM' },
            approver: { login: 'maria@corp.example', slackId: 'U0MARIA' },
          },
          slack: { channelId: 'C0GENERAL' },
        },
        {
          reminders: 1,
          escalatedTo: { login: 'chen@corp.example', chatId: 'U0CHEN' },
          decided: {
            decision: 'approved',
            by: 'maria@corp.example',
            seenAt: new Date('2026-11-02T11:30:00Z'),
          },
        },
      );
      // Friday 20 November 17:00: rejected Monday 10:00, 65 hours, 2 of them working hours.
      await seedReported(
        store,
        'RPT000000002',
        {
          request: { createdAt: new Date('2026-11-20T17:00:00Z') },
          parties: { approver: { login: 'maria@corp.example' } },
        },
        {
          decided: {
            decision: 'rejected',
            by: 'maria@corp.example',
            seenAt: new Date('2026-11-23T10:00:00Z'),
          },
        },
      );
      // Still open, and one from October.
      await seedReported(store, 'RPT000000003', {
        request: { createdAt: new Date('2026-11-25T12:00:00Z') },
        parties: { approver: { login: 'lee@corp.example' } },
      });
      await seedReported(store, 'RPT000000000', {
        request: { createdAt: new Date('2026-10-15T12:00:00Z') },
        parties: { approver: { login: 'lee@corp.example' } },
      });
    }, 60_000);
    afterAll(() => database?.close());

    it('exports one row per approval with the documented columns, without titles or notes', async () => {
      const { stdout } = await report(database.url, ['export']);
      const [header, ...rows] = parseCsv(stdout);
      expect(header).toEqual([
        'number',
        'status',
        'requester_login',
        'requester_slack_id',
        'approver_login',
        'approver_step',
        'handed_over_from',
        'channel_id',
        'channel_name',
        'template_id',
        'template_name',
        'started_at',
        'decision',
        'decided_by',
        'decision_seen_at',
        'decision_told_at',
        'hours_to_decision',
        'working_hours_to_decision',
        'reminders',
        'escalated_to',
        'requested_again_from',
        'requested_again_as',
      ]);
      expect(rows.map((r) => r[0])).toEqual([
        'RPT000000000',
        'RPT000000001',
        'RPT000000002',
        'RPT000000003',
      ]);
      const first = Object.fromEntries((header ?? []).map((h, i) => [h, rows[1]?.[i]]));
      expect(first).toMatchObject({
        status: 'decided',
        requester_login: 'sam@corp.example',
        requester_slack_id: 'U0SAM',
        approver_login: 'maria@corp.example',
        approver_step: '1',
        channel_id: 'C0GENERAL',
        template_id: 'tpl-1',
        template_name: 'Laptop',
        started_at: '2026-11-02T09:00:00.000Z',
        decision: 'approved',
        decided_by: 'maria@corp.example',
        decision_seen_at: '2026-11-02T11:30:00.000Z',
        decision_told_at: '2026-11-02T11:30:02.000Z',
        hours_to_decision: '2.5',
        working_hours_to_decision: '2.5',
        reminders: '1',
        escalated_to: 'chen@corp.example',
      });
      const second = Object.fromEntries((header ?? []).map((h, i) => [h, rows[2]?.[i]]));
      expect(second).toMatchObject({ hours_to_decision: '65', working_hours_to_decision: '2' });
      expect(stdout).not.toContain('HYPERLINK');
      expect(stdout).not.toContain('Line one');
    }, 120_000);

    it('filters by day, both days included, and neutralises a formula in a title with --with-text', async () => {
      const { stdout } = await report(database.url, [
        'export',
        '--from',
        '2026-11-02',
        '--to',
        '2026-11-20',
        '--with-text',
      ]);
      const [header, ...rows] = parseCsv(stdout);
      expect(header?.slice(-2)).toEqual(['title', 'note']);
      expect(rows.map((r) => r[0])).toEqual(['RPT000000001', 'RPT000000002']);
      // Shown by a spreadsheet as text, not run: a ' before the =.
      expect(rows[0]?.at(-2)).toBe(`'${HOSTILE}`);
      expect(rows[0]?.at(-1)).toBe('Line one, "quoted"');
    }, 120_000);

    it('exports JSON, each row an object of the same columns', async () => {
      const { stdout } = await report(database.url, [
        'export',
        '--format',
        'json',
        '--from',
        '2026-11-21',
      ]);
      const rows = JSON.parse(stdout) as Array<Record<string, unknown>>;
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        number: 'RPT000000003',
        status: 'open',
        decision: 'pending',
        hours_to_decision: null,
        approver_step: 1,
      });
      expect(rows[0]).not.toHaveProperty('title');
      const none = await report(database.url, [
        'export',
        '--format',
        'json',
        '--from',
        '2030-01-01',
      ]);
      expect(JSON.parse(none.stdout)).toEqual([]);
    }, 120_000);

    it('summarises by approver: count, share approved, median and p90 in working hours, open ones', async () => {
      const { stdout } = await report(database.url, ['summary', '--from', '2026-11-01']);
      // The open one's age is the machine's clock's: said as the command will see it.
      const now = new Date();
      const week = ageBandOf(new Date('2026-11-25T12:00:00Z'), now) === 'over-7d' ? 1 : 0;
      const band = ageBandOf(new Date('2026-11-25T12:00:00Z'), now);
      const lines = stdout.trimEnd().split('\n');
      expect(lines[0]).toContain('3 approvals started from 2026-11-01 to now, by approver');
      // Decided in 2.5 and 2 working hours: the median (nearest rank) 2, the 90th percentile 2.5.
      expect(lines).toContain(`all\t3\t50%\t2 h\t2.5 h\t1\t${week}`);
      expect(lines).toContain('maria@corp.example\t2\t50%\t2 h\t2.5 h\t0\t0');
      expect(lines).toContain(`lee@corp.example\t1\t–\t–\t–\t1\t${week}`);
      expect(lines.at(-1)).toContain(`${band} 1`);
      const byTemplate = await report(database.url, ['summary', '--by', 'template']);
      expect(byTemplate.stdout).toContain('Laptop\t1\t100%\t2.5 h\t2.5 h\t0\t0');
      expect(byTemplate.stdout).toContain(`(no template)\t3\t0%\t2 h\t2 h\t2\t${1 + week}`);
    }, 120_000);

    it('reads page after page, each approval once, in the order of their numbers', async () => {
      const numbers: string[] = [];
      for await (const r of streamApprovalRecords(database.handle.db, {}, 3)) numbers.push(r.djbh);
      expect(numbers).toEqual(['RPT000000000', 'RPT000000001', 'RPT000000002', 'RPT000000003']);
      const november: string[] = [];
      const range = {
        from: new Date('2026-11-01T00:00:00Z'),
        to: new Date('2026-11-21T00:00:00Z'),
      };
      for await (const r of streamApprovalRecords(database.handle.db, range, 1))
        november.push(r.djbh);
      expect(november).toEqual(['RPT000000001', 'RPT000000002']);
    });

    it('counts open approvals by age for /metrics, as the report bands them', async () => {
      const source = createMetricsSource(database.handle.db);
      expect(await source.openApprovalsByAge?.(new Date('2026-11-27T00:00:00Z'))).toEqual({
        'under-1d': 0,
        '1d-3d': 1,
        '3d-7d': 0,
        'over-7d': 1,
      });
    });

    it('refuses what it cannot read, with the usage, before opening anything', async () => {
      const wrong = await report('postgres://nobody@127.0.0.1:1/none', [
        'export',
        '--from',
        '2026-13-01',
      ]);
      expect(wrong).toMatchObject({ code: 2 });
      expect((wrong as { stderr: string }).stderr).toContain('npm run report -- export');
      const help = await report('postgres://nobody@127.0.0.1:1/none', ['--help']);
      expect(help.stdout).toContain('--with-text');
      const department = await report(database.url, ['summary', '--by', 'department']);
      expect(department).toMatchObject({ code: 2 });
      expect(department.stdout).toContain('APPROVAL_BASE_URL');
    }, 120_000);
  });
}
