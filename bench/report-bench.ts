import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DatabaseHandle, openDatabase } from '../src/store/database.ts';
import type { AnnouncementRow, TrackedApprovalRow } from '../src/store/schema.ts';
import { seededRandom } from '../test/helpers/seeded-random.ts';
import { analyzeScratchDatabase, emptyScratchDatabase } from './scratch-database.ts';
import { APP_NODE_FLAGS } from './sweep-bench.ts';
import { rows, verdict } from './table.ts';

// Issue 42's row: the auditors' export of a year of a 20,000-person company (100,000 approvals)
// runs compiled, in a process of its own as an operator runs it (`npm run build` first), within a
// minute and in bounded memory. Rows are written straight into the tables (starting 100,000
// approvals through the store would take longer than the export being measured).

const DAY = 86_400_000;
const BATCH = 500;

/** A year of approvals: most decided within days, some open, some with templates and handovers. */
export async function seed(handle: DatabaseHandle, count: number): Promise<void> {
  const random = seededRandom(42);
  const yearAgo = Date.parse('2025-11-28T00:00:00Z');
  for (let start = 0; start < count; start += BATCH) {
    const approvals: TrackedApprovalRow[] = [];
    const decisions: AnnouncementRow[] = [];
    for (let i = start; i < Math.min(count, start + BATCH); i++) {
      const djbh = `Y${String(i).padStart(11, '0')}`;
      const created = yearAgo + Math.floor(random() * 360 * DAY);
      const outcome = random();
      const decision = outcome < 0.75 ? 'approved' : outcome < 0.95 ? 'rejected' : 'pending';
      const seen = created + Math.floor(random() * 5 * DAY);
      const person = (n: number) => `person${n}@corp.example`;
      approvals.push({
        djbh,
        team_id: 'T1',
        channel_id: `C${i % 300}`,
        message_ts: '1700000000.000100',
        requester_slack_id: `U${i % 20_000}`,
        requester_login: person(i % 20_000),
        approver_login: person((i * 7) % 2_000),
        approver_slack_id: `U${(i * 7) % 2_000}`,
        title: i % 97 === 0 ? '=HYPERLINK("x")' : `Request ${i}, "quoted"`,
        note: 'n'.repeat(200),
        decision,
        decided_by: decision === 'pending' ? null : person((i * 7) % 2_000),
        tracking: decision === 'pending' ? 'active' : 'finished',
        locale: 'en-US',
        created_at: created,
        updated_at: seen,
        last_checked_at: seen,
        next_check_at: seen,
        check_failures: 0,
        lease_until: null,
        reminders_sent: i % 4,
        last_reminded_at: null,
        unknown_since: null,
        thread_ts: null,
        function_execution_id: null,
        again_of: i % 50 === 0 ? `Y${String(i - 1).padStart(11, '0')}` : null,
        again_of_link: null,
        approver_unreachable_since: null,
        check_token: null,
        escalated_at: i % 20 === 0 ? created + DAY : null,
        escalated_to_login: i % 20 === 0 ? person(1) : null,
        escalated_to_slack_id: i % 20 === 0 ? 'U1' : null,
        template_name: i % 3 === 0 ? 'Purchase' : null,
        template_id: i % 3 === 0 ? 'tpl-purchase' : null,
        requested_again_as: null,
        requested_again_channel: null,
        requested_again_ts: null,
        announcements_recorded: decision === 'pending' ? 0 : 1,
        approver_term: i % 40 === 0 ? 1 : 0,
        approver_from_seq: 0,
        approver_since: null,
        former_approvers:
          i % 40 === 0 ? JSON.stringify([{ login: person(2), chatId: 'U2' }]) : null,
        hot_until: null,
      });
      if (decision !== 'pending')
        decisions.push({
          id: `${djbh}:decision:${decision}`,
          djbh,
          kind: 'decision',
          decision,
          state: 'sent',
          attempts: 1,
          attempted_at: seen + 2000,
          lease_until: null,
          sent_ts: '1700000000.000200',
          last_error: null,
          created_at: seen,
          occurrence: null,
          next_attempt_at: seen,
          attempt_token: null,
          uncertain: 0,
          sent_channel: `C${i % 300}`,
          first_attempted_at: seen + 1000,
          redriven_at: null,
          paused_ms: 0,
          commit_horizon_at: null,
          lane_key: `thread:C${i % 300}`,
          seq: 1,
        });
    }
    await handle.db.insertInto('tracked_approvals').values(approvals).execute();
    if (decisions.length > 0)
      await handle.db.insertInto('announcements').values(decisions).execute();
  }
}

/** The compiled export on `url`: how long it took, its peak RSS, and how many lines it wrote. */
function runExport(
  url: string,
  args: string[],
  nodeFlags: string[] = [],
): Promise<{ ms: number; rssMb: number; lines: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [
        ...APP_NODE_FLAGS,
        ...nodeFlags,
        '--import',
        './bench/peak-rss.mjs',
        'dist/operator/report-cli.js',
        'export',
        ...args,
      ],
      {
        env: { ...process.env, DATABASE_URL: url, SLACK_BOT_TOKEN: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let lines = 0;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 10) lines++;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      const kb = Number(/peak-rss-kb (\d+)/.exec(stderr)?.[1] ?? Number.NaN);
      if (code !== 0) reject(new Error(`the export exited ${code}: ${stderr}`));
      else resolve({ ms, rssMb: kb / 1024, lines });
    });
  });
}

export async function reportBench(
  count: number,
  targets: { ms: number; rssMb: number; heapCapMb: number },
  databaseUrl?: string,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-report-'));
  const url = databaseUrl ?? join(dir, 'report.db');
  const handle = await openDatabase(url);
  const name = handle.dialect === 'postgres' ? 'Postgres' : 'SQLite';
  try {
    await emptyScratchDatabase(handle);
    await seed(handle, count);
    // What autovacuum does on its own after a load (other benches do the same).
    await analyzeScratchDatabase(handle);
    // The third run caps the heap: what the export keeps alive is a page, whatever the count; the
    // peak RSS of the first two is V8 growing its heap lazily over the process's own ~100 MB.
    const runs: Array<[string[], string[]]> = [
      [[], []],
      [['--format', 'json', '--with-text'], []],
      [[], [`--max-old-space-size=${targets.heapCapMb}`]],
    ];
    for (const [args, flags] of runs) {
      const result = await runExport(url, args, flags);
      if (result.lines < count)
        throw new Error(`the export wrote ${result.lines} lines for ${count} approvals`);
      const capped = flags.length > 0 ? `, heap capped at ${targets.heapCapMb} MB` : '';
      rows.push({
        case: `report export ${args.join(' ') || '(CSV)'} on ${name}, compiled${capped}`,
        n: count,
        'ms total': result.ms.toFixed(0),
        'µs each': ((result.ms * 1000) / count).toFixed(0),
        target: `${verdict(result.ms, targets.ms)} ms; peak RSS ${result.rssMb.toFixed(0)} MB: ${verdict(result.rssMb, targets.rssMb)} MB`,
      });
    }
  } finally {
    await handle.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
