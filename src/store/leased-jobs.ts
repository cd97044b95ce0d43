import type { Kysely } from 'kysely';
import type { LeasedJobs } from '../approvals/leased-jobs.ts';
import type { Database } from './schema.ts';

/**
 * Once-per-period jobs over Kysely: one row of job_runs per job, claimed with a lease. Measured on
 * the caller's `now` (the schedule's clock), as the job's period is.
 */
export function createLeasedJobs(db: Kysely<Database>): LeasedJobs {
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
        .set({ lease_until: now.getTime() + leaseMs })
        .where('name', '=', name)
        .where('next_run_at', '<=', now.getTime())
        .where((eb) =>
          eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now.getTime())]),
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
