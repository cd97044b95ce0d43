import { type Kysely, sql } from 'kysely';
import type { JobClaim, LeasedJobs } from '../approvals/leased-jobs.ts';
import type { DialectName } from './database.ts';
import { dbNowMs, wholeMs } from './db-clock.ts';
import type { Database } from './schema.ts';

/**
 * Once-per-period jobs over Kysely: one row of job_runs per job, claimed with a lease. The period
 * is measured on the caller's `now` (the schedule's clock); the lease, like every other lease, on
 * the database's clock, so a replica whose clock is behind cannot cut another's run short.
 *
 * The fence is the lease's end as the database wrote it: a claim or an extension sets it to the
 * database's now plus the lease, later than any lease that had run out before, so every hold has
 * its own value, and finishing, extending or letting go applies only where it is still the one
 * written. (It needs no column of its own, so the release before this one, which writes only
 * lease_until, is fenced out too when it takes a job over.)
 */
export function createLeasedJobs(db: Kysely<Database>, dialect: DialectName): LeasedJobs {
  const holding = (claim: JobClaim) =>
    db
      .updateTable('job_runs')
      .where('name', '=', claim.name)
      .where('lease_until', '=', claim.token);
  return {
    async claimJob(name, now, leaseMs) {
      await db
        .insertInto('job_runs')
        .values({ name, next_run_at: 0, lease_until: null })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      // One conditional write: of replicas racing for a due run, exactly one takes its lease.
      const taken = await db
        .updateTable('job_runs')
        .set({ lease_until: sql<number>`${dbNowMs(dialect)} + ${wholeMs(Math.max(1, leaseMs))}` })
        .where('name', '=', name)
        .where('next_run_at', '<=', now.getTime())
        .where((eb) =>
          eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', dbNowMs(dialect))]),
        )
        .returning('lease_until')
        .executeTakeFirst();
      return taken?.lease_until == null ? undefined : { name, token: Number(taken.lease_until) };
    },

    async holdJob(claim, leaseMs) {
      const held = await holding(claim)
        .set({ lease_until: sql<number>`${dbNowMs(dialect)} + ${wholeMs(Math.max(1, leaseMs))}` })
        .returning('lease_until')
        .executeTakeFirst();
      return held?.lease_until == null
        ? undefined
        : { name: claim.name, token: Number(held.lease_until) };
    },

    async finishJob(claim, now, periodMs) {
      const result = await holding(claim)
        .set({ next_run_at: now.getTime() + periodMs, lease_until: null })
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async abandonJob(claim) {
      await holding(claim).set({ lease_until: null }).execute();
    },
  };
}
