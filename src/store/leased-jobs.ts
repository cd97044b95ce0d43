import { type Kysely, sql } from 'kysely';
import type { LeasedJobs } from '../approvals/leased-jobs.ts';
import type { DialectName } from './database.ts';
import { dbNowMs, wholeMs } from './db-clock.ts';
import type { Database } from './schema.ts';

/**
 * Once-per-period jobs over Kysely: one row of job_runs per job, claimed with a lease. The period
 * is measured on the caller's `now` (the schedule's clock); the lease, like every other lease, on
 * the database's clock, so a replica whose clock is behind cannot cut another's run short.
 */
export function createLeasedJobs(db: Kysely<Database>, dialect: DialectName): LeasedJobs {
  return {
    async claimJob(name, now, leaseMs) {
      await db
        .insertInto('job_runs')
        .values({ name, next_run_at: 0, lease_until: null })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      // One conditional write: of replicas racing for a due run, exactly one takes its lease.
      const result = await db
        .updateTable('job_runs')
        .set({ lease_until: sql<number>`${dbNowMs(dialect)} + ${wholeMs(leaseMs)}` })
        .where('name', '=', name)
        .where('next_run_at', '<=', now.getTime())
        .where((eb) =>
          eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', dbNowMs(dialect))]),
        )
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async finishJob(name, now, periodMs) {
      await db
        .updateTable('job_runs')
        .set({ next_run_at: now.getTime() + periodMs, lease_until: null })
        .where('name', '=', name)
        .execute();
    },

    async abandonJob(name) {
      await db
        .updateTable('job_runs')
        .set({ lease_until: null })
        .where('name', '=', name)
        .execute();
    },
  };
}
