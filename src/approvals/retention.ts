/**
 * What the app keeps, and for how long. Approvals carry titles and notes that are often personal
 * data; nothing should stay for good just because nobody deletes it.
 * - An approval that ended (decided, or no longer followed) is deleted with its announcements
 *   `retentionDays` after its last change, once nothing of it is left to deliver. 0 keeps all.
 * - A workflow step's confirmation (who asked whom to start what) goes with the same retention
 *   once it is settled: the approval started, or the step told that nothing was.
 * - A form submission's replay key only has to outlive Slack's retries: a day.
 * - Account links stay until the person unlinks: they are the person's own setting.
 * One replica a day does it; the others find the day's run taken.
 */

export interface RetentionOptions {
  /** Days an ended approval is kept; 0 keeps everything. */
  retentionDays: number;
}

export const SUBMISSION_KEY_KEEP_MS = 24 * 3_600_000;
/** How often the purge runs; the job is claimed per period, so one replica runs it. */
export const RETENTION_PERIOD_MS = 24 * 3_600_000;
export const RETENTION_JOB = 'retention';
/** Deleted per transaction, so a first purge of a big backlog never holds long locks. */
const BATCH = 500;

export interface PurgeCounts {
  approvals: number;
  announcements: number;
  confirmations: number;
  submissionKeys: number;
}

/** The port the purge needs; the store executes it without knowing why. */
export interface RetentionStore {
  /**
   * Claims the job for this period: true for exactly one caller per `periodMs` across replicas
   * (the claim moves the job's next run forward in one conditional write).
   */
  claimJob(name: string, now: Date, periodMs: number): Promise<boolean>;
  /**
   * Deletes up to `limit` approvals that ended (no longer followed) with no change since
   * `before` and no announcement still to deliver, with their announcements, in one transaction.
   */
  deleteEndedApprovals(
    before: Date,
    limit: number,
  ): Promise<{ approvals: number; announcements: number }>;
  /** Deletes settled workflow confirmations (started, or ended with their step told) made before `before`. */
  deleteSettledConfirmations(before: Date): Promise<number>;
  deleteSubmissionKeys(before: Date): Promise<number>;
}

/**
 * One purge, if this replica claims the period's run: returns what it deleted, or undefined when
 * another replica (or an earlier pass of this one) has already run it in this period.
 */
export async function purgeExpired(
  store: RetentionStore,
  options: RetentionOptions,
  now: Date,
): Promise<PurgeCounts | undefined> {
  if (!(await store.claimJob(RETENTION_JOB, now, RETENTION_PERIOD_MS))) return undefined;
  const counts: PurgeCounts = {
    approvals: 0,
    announcements: 0,
    confirmations: 0,
    submissionKeys: await store.deleteSubmissionKeys(
      new Date(now.getTime() - SUBMISSION_KEY_KEEP_MS),
    ),
  };
  if (options.retentionDays > 0) {
    const before = new Date(now.getTime() - options.retentionDays * 24 * 3_600_000);
    for (;;) {
      const batch = await store.deleteEndedApprovals(before, BATCH);
      counts.approvals += batch.approvals;
      counts.announcements += batch.announcements;
      if (batch.approvals < BATCH) break;
    }
    counts.confirmations = await store.deleteSettledConfirmations(before);
  }
  return counts;
}
