import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { appliedMigrations, migrateDownOnce } from '../../src/store/migrations.ts';
import { TEST_DATABASES, type TestDatabase } from '../helpers/databases.ts';

// A rolling deploy onto a year of data: the migrations after 019 run (as the new release's start
// or `npm run migrate` runs them) while a replica of the previous release goes on checking,
// recording and delivering on the same database. Each of its requests must be answered within a
// second, well inside the app's 15 s statement timeout, from the first to the last migration.

/** The last migration the previous release of this test knows. */
const PREVIOUS_RELEASE = '2026-11-25-019-conversation-lanes';
/** A year of a 20,000-person company, each approval with 4 announcements. */
const APPROVALS = 100_000;
const ANSWERED_WITHIN_MS = 1_000;

const postgres = TEST_DATABASES.find((d) => d.name === 'postgres') as TestDatabase;

describe.skipIf(postgres.skipReason)(
  `migrating a year of data while the previous release runs on postgres${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}; SQLite has one writer, so its replicas are never two releases at once`,
  () => {
    let url: string;
    let drop: () => Promise<void>;
    let previous: pg.Pool;

    beforeAll(async () => {
      ({ url, drop } = await postgres.create());
      const handle = await openDatabase(url);
      try {
        while ((await appliedMigrations(handle.db as never)).sort().at(-1) !== PREVIOUS_RELEASE)
          await migrateDownOnce(handle.db as never);
      } finally {
        await handle.close();
      }
      const seeding = performance.now();
      await seedAYear(url);
      process.stdout.write(
        `seeded ${APPROVALS} approvals × 4 announcements in ${Math.round(performance.now() - seeding)} ms\n`,
      );
      // The previous release's pool, with the app's statement timeout.
      previous = new pg.Pool({ connectionString: url, max: 4, statement_timeout: 15_000 });
    }, 300_000);
    afterAll(async () => {
      await previous?.end();
      await drop?.();
    });

    it('answers every request of the previous release within a second while the migrations run', async () => {
      const answers: Array<{ what: string; ms: number; error?: string }> = [];
      let migrating = true;
      const release = previousRelease(previous);
      const traffic = (async () => {
        for (let turn = 0; migrating; turn++) {
          const what = release.steps[turn % release.steps.length] as PreviousReleaseStep;
          const started = performance.now();
          try {
            await what.run();
            answers.push({ what: what.name, ms: performance.now() - started });
          } catch (error) {
            answers.push({
              what: what.name,
              ms: performance.now() - started,
              error: String(error),
            });
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      const started = performance.now();
      let migrated: DatabaseHandle | undefined;
      try {
        migrated = await openDatabase(url);
      } finally {
        migrating = false;
        await traffic;
        await migrated?.close();
      }
      const migrationMs = performance.now() - started;
      const slowest = answers.reduce((a, b) => (b.ms > a.ms ? b : a), { what: 'none', ms: 0 });
      process.stdout.write(
        `migrations after 019 on ${APPROVALS} approvals × 4 announcements: ${Math.round(migrationMs)} ms; ` +
          `${answers.length} requests of the previous release meanwhile, slowest ${slowest.what} ${Math.round(slowest.ms)} ms\n`,
      );
      expect(answers.filter((a) => a.error)).toEqual([]);
      expect(answers.filter((a) => a.ms >= ANSWERED_WITHIN_MS)).toEqual([]);
      // It really ran throughout: requests of every kind were answered while it was under way.
      expect(answers.length).toBeGreaterThanOrEqual(release.steps.length);
      // What it recorded meanwhile is numbered after what was there, with no number twice.
      const numbering = await previous.query<{ unnumbered: string; twice: string; behind: string }>(
        `select (select count(*) from announcements where seq is null) as unnumbered,
           (select count(*) from (select djbh, seq from announcements group by djbh, seq
              having count(*) > 1) d) as twice,
           (select count(*) from tracked_approvals t where announcements_recorded <>
              (select coalesce(max(seq), 0) from announcements a where a.djbh = t.djbh)) as behind`,
      );
      expect(numbering.rows[0]).toEqual({ unnumbered: '0', twice: '0', behind: '0' });
      const reminders = await previous.query<{ id: string; seq: string }>(
        'select id, seq from announcements where djbh = any($1) order by djbh, seq',
        [release.remindedApprovals],
      );
      expect(reminders.rows.length).toBe(release.remindedApprovals.length * 5);
      for (const [i, djbh] of release.remindedApprovals.sort().entries())
        expect(reminders.rows.slice(i * 5, i * 5 + 5).map((r) => `${r.id} ${r.seq}`)).toEqual([
          `${djbh}:request 1`,
          `${djbh}:approver-dm 2`,
          `${djbh}:reminder 3`,
          `${djbh}:decision 4`,
          `${djbh}:reminder:2 5`,
        ]);
    }, 600_000);
  },
);

interface PreviousReleaseStep {
  name: string;
  run(): Promise<void>;
}

/**
 * What a replica of the previous release (schema 019) does, in its own SQL: it starts (reads the
 * migrations table), claims due approvals and records their checks, records a new approval with
 * its announcements, and delivers an announcement (its approval's row first, then the
 * announcement, as the one lock order has it).
 */
function previousRelease(pool: pg.Pool): {
  steps: PreviousReleaseStep[];
  /** The approvals of the year it recorded a second reminder of. */
  remindedApprovals: string[];
} {
  let delivered = 0;
  let reminded = 0;
  const remindedApprovals: string[] = [];
  const inTransaction = async (work: (client: pg.PoolClient) => Promise<void>) => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await work(client);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
  return {
    remindedApprovals,
    steps: [
      {
        name: 'start',
        run: async () => {
          await pool.query('select name from kysely_migration');
          await pool.query('select 1');
        },
      },
      {
        name: 'claim and check due approvals',
        run: async () => {
          const now = Date.now();
          const claimed = await pool.query<{ djbh: string }>(
            `update tracked_approvals set lease_until = $1::bigint + 60000, check_token = $2
              where djbh in (select djbh from tracked_approvals
                where tracking = 'active' and next_check_at <= $1
                  and (last_checked_at is null or last_checked_at < $1)
                  and (lease_until is null or lease_until < $1)
                order by next_check_at limit 16 for update skip locked)
              returning djbh`,
            [now, randomUUID()],
          );
          await pool.query(
            `update tracked_approvals set last_checked_at = $1, next_check_at = $1::bigint + 3600000,
               lease_until = null, check_token = null, updated_at = $1
              where djbh = any($2)`,
            [now, claimed.rows.map((r) => r.djbh)],
          );
        },
      },
      {
        name: 'record a new approval',
        run: () =>
          inTransaction(async (client) => {
            const djbh = `N${randomUUID().slice(0, 11)}`;
            const now = Date.now();
            await client.query(
              `insert into tracked_approvals (djbh, team_id, channel_id, requester_slack_id,
                 requester_login, approver_login, title, note, decision, tracking, locale,
                 created_at, updated_at, next_check_at)
               values ($1, 'T1', 'C1', 'U1', 'req1', 'appr1', 'New', '', 'pending', 'active', 'en',
                 $2, $2, $2)`,
              [djbh, now],
            );
            for (const kind of ['request', 'approver-dm'])
              await client.query(
                `insert into announcements (id, djbh, kind, state, created_at, lane_key)
                 values ($1, $2, $3, 'pending', $4, 'C1')`,
                [`${djbh}:${kind}`, djbh, kind, now],
              );
          }),
      },
      {
        name: 'remind the approver of an approval of the year',
        run: async () => {
          const djbh = `A${String(((++reminded * 1009) % APPROVALS) + 1).padStart(11, '0')}`;
          remindedApprovals.push(djbh);
          await pool.query(
            `insert into announcements (id, djbh, kind, occurrence, state, created_at, lane_key)
             values ($1, $2, 'reminder', 2, 'pending', $3, 'W1')`,
            [`${djbh}:reminder:2`, djbh, Date.now()],
          );
        },
      },
      {
        name: 'deliver an announcement',
        run: () =>
          inTransaction(async (client) => {
            const djbh = `A${String(((++delivered * 997) % APPROVALS) + 1).padStart(11, '0')}`;
            await client.query(
              'select djbh from tracked_approvals where djbh = $1 for no key update',
              [djbh],
            );
            await client.query(
              `update announcements set state = 'sent', sent_ts = $2, attempts = attempts + 1
                where id = $1`,
              [`${djbh}:decision`, `${Date.now() / 1000}`],
            );
          }),
      },
    ],
  };
}

/**
 * 100,000 approvals, a tenth still waiting, each with its request, DM, reminder and decision, in
 * bulk SQL on a connection without the app's statement timeout.
 */
async function seedAYear(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('set synchronous_commit = off');
    const t0 = Date.now() - 365 * 24 * 3600_000;
    await client.query(
      `insert into tracked_approvals (djbh, team_id, channel_id, message_ts, requester_slack_id,
         requester_login, approver_login, approver_slack_id, title, note, decision, decided_by,
         tracking, locale, created_at, updated_at, next_check_at)
       select 'A' || lpad(i::text, 11, '0'), 'T1', 'C' || (i % 500), '1700000000.' || i,
         'U' || (i % 20000), 'req' || (i % 20000), 'appr' || (i % 2000), 'W' || (i % 2000),
         'Approval number ' || i, 'Please approve the thing numbered ' || i,
         case when i % 10 = 0 then 'pending' else 'approved' end,
         case when i % 10 = 0 then null else 'appr' || (i % 2000) end,
         case when i % 10 = 0 then 'active' else 'ended' end, 'en',
         $1::bigint + i * 315000, $1::bigint + i * 315000 + 60000, $1::bigint + i * 315000 + 120000
       from generate_series(1::bigint, $2::bigint) i`,
      [t0, APPROVALS],
    );
    for (const [n, kind] of ['request', 'approver-dm', 'reminder', 'decision'].entries())
      await client.query(
        `insert into announcements (id, djbh, kind, decision, occurrence, state, attempts,
           attempted_at, sent_ts, sent_channel, created_at, lane_key)
         select a.djbh || ':' || $1, a.djbh, $1, case when $1 = 'decision' then a.decision end,
           case when $1 = 'reminder' then 1 end, 'sent', 1, a.created_at + $2::bigint * 1000,
           '1700000001.' || $2, a.channel_id, a.created_at + $2::bigint * 1000, a.channel_id
         from tracked_approvals a`,
        [kind, n],
      );
    await client.query('analyze');
  } finally {
    await client.end();
  }
}
