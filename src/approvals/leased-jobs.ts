/**
 * Jobs that run once per period across the fleet: every replica ticks, the one that claims the
 * period's run does it. A run that dies keeps its claim only until its lease runs out. Any
 * scheduled job may use it (the retention purge does); implemented with Kysely in src/store.
 */
export interface LeasedJobs {
  /**
   * Claims the job's run for this period: true for exactly one caller while the period is due
   * and no other run holds its lease, across replicas (one conditional write).
   */
  claimJob(name: string, now: Date, leaseMs: number): Promise<boolean>;
  /** The run went through: the job is next due `periodMs` after `now`, and its lease is let go. */
  finishJob(name: string, now: Date, periodMs: number): Promise<void>;
  /** The run failed or stopped: its lease is let go, so the next tick tries again. */
  abandonJob(name: string): Promise<void>;
}
