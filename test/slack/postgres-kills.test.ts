import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { type Harness, startHarness, waitFor } from '../helpers/harness.ts';

// Two replicas on Postgres while someone terminates the app's database connections every few
// hundred ms (a failover, a pooler restart, an operator's pg_terminate_backend): no replica
// crashes (a connection killed while in use had no error handler), and once the kills stop every
// decision is posted exactly once, without a restart.

const postgres = TEST_DATABASES.find((d) => d.name === 'postgres');
const skipReason = postgres?.skipReason;
// The burst the issue names: 40 decisions at once.
const DECISIONS = 40;

describe.skipIf(skipReason)(
  `connections killed under two replicas${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let h: Harness;
    let drop: () => Promise<void>;
    let name: string;

    beforeAll(async () => {
      if (!postgres) throw new Error('no postgres');
      const database = await postgres.create();
      drop = database.drop;
      name = new URL(database.url).pathname.slice(1);
      h = await startHarness({ databaseUrl: database.url });
    });
    afterAll(async () => {
      await h?.close();
      await drop?.();
    });

    it('posts every decision once after its connections were killed again and again during the burst', async () => {
      const replica = await h.startReplica();
      const started: Array<Awaited<ReturnType<Harness['startApproval']>>> = [];
      for (let i = 0; i < DECISIONS; i++)
        started.push(await h.startApproval('sam.taylor@corp.example', 'general', `Kill ${i}`));
      for (const { approval } of started) h.sim.decide(approval.djbh, 'agree');
      const killer = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL });
      await killer.connect();
      let killed = 0;
      try {
        // Both replicas poll and deliver while their connections are killed, over and over.
        for (let round = 0; round < 12; round++) {
          const work = Promise.allSettled([h.app.poll(), replica.poll()]);
          await new Promise((r) => setTimeout(r, 30 + round * 10));
          const { rowCount } = await killer.query(
            'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
            [name],
          );
          killed += rowCount ?? 0;
          await work;
        }
      } finally {
        await killer.end();
      }
      expect(killed).toBeGreaterThan(0);
      // The kills stop: both replicas resume by themselves (their next passes, their background
      // delivery), and each decision reaches its thread once.
      const approvedIn = (parent: (typeof started)[number]['parent']) =>
        h.workspace.replies(parent.channel, parent.ts).filter((m) => m.text.includes('Approved'));
      await waitFor(
        async () => {
          const later = new Date(Date.now() + 15 * 60_000);
          await Promise.allSettled([h.app.poll(later), replica.poll(later)]);
          return started.every(({ parent }) => approvedIn(parent).length > 0);
        },
        300_000,
        'every decision posted',
      );
      for (const { parent } of started) expect(approvedIn(parent)).toHaveLength(1);
    }, 600_000);
  },
);
