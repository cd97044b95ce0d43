/**
 * Jobs that run once per period across the fleet: every replica ticks, the one that claims the
 * period's run does it. A run that dies keeps its claim only until its lease runs out. Any
 * scheduled job may use it (the retention purge does); implemented with Kysely in src/store.
 */
export interface LeasedJobs {
  /**
   * Claims the job's run for this period: a claim for exactly one caller while the period is due
   * and no other run holds its lease, across replicas (one conditional write); else undefined.
   */
  claimJob(name: string, now: Date, leaseMs: number): Promise<JobClaim | undefined>;
  /**
   * Extends the run's lease by `leaseMs` from now, if the claim still holds it: the claim to use
   * from then on, or undefined when its lease ran out and another run took the job over.
   */
  holdJob(claim: JobClaim, leaseMs: number): Promise<JobClaim | undefined>;
  /**
   * The run went through: the job is next due `periodMs` after `now`, and its lease is let go.
   * Only while the claim holds the lease: false (nothing changed) when another run took it over.
   */
  finishJob(claim: JobClaim, now: Date, periodMs: number): Promise<boolean>;
  /** The run failed or stopped: its lease is let go (if it still holds it), so the next tick tries again. */
  abandonJob(claim: JobClaim): Promise<void>;
}

/**
 * One run's hold on a job, fenced: a run whose lease ran out (another replica took over) can no
 * longer finish, extend or let go of the new run's lease.
 */
export interface JobClaim {
  readonly name: string;
  /** Opaque to the domain: the store's fence for this hold. */
  readonly token: number;
}
