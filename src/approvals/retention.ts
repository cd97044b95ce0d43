/**
 * What the app keeps, and for how long. Approvals carry titles and notes that are often personal
 * data; nothing should stay for good just because nobody deletes it.
 * - An approval that ended (decided, or no longer followed) is deleted with its announcements
 *   `retentionDays` after its last change, once all of them were delivered: one still pending,
 *   or failed (an operator may still re-drive it), keeps it, and so does its Request again while
 *   that is followed. The lifecycle's `retention-due` rule says which (lifecycle/transition.ts's
 *   retentionTransition). 0 keeps everything. Nothing else
 *   keeps its number or its people after that: the confirmation and replay key of the workflow
 *   step that started it, and the delivery lanes nobody uses (named by conversation), go too.
 * - A workflow step's confirmation (who asked whom to start what) goes with the same retention
 *   once it is settled: the approval started, or the step told that nothing was.
 * - A form submission's replay key only has to outlive Slack's retries: a day.
 * - Account links stay until the person unlinks: they are the person's own setting.
 * - A delegate while away (delegation.ts) goes 30 days after it ended, whatever `retentionDays`
 *   says: it names who was away when, and nothing is decided by it once it has ended.
 * - Request templates name people (who made, changed or removed one; its suggested approver): a
 *   removed template goes with its changes `retentionDays` after it was removed, and a live one
 *   keeps only its last change once the others are that old (who is answerable for it as it is).
 * One replica a day does it (a leased claim: a run that dies is taken over at the next tick).
 */

import { EXPIRED_DELEGATION_KEEP_MS } from './delegation.ts';
import type { LeasedJobs } from './leased-jobs.ts';

export { ENDED_TRACKING } from './lifecycle/transition.ts';

export interface RetentionOptions {
  /** Days an ended approval is kept; 0 keeps everything. */
  retentionDays: number;
}

export const SUBMISSION_KEY_KEEP_MS = 24 * 3_600_000;
/** How often the purge runs; the job is claimed per period, so one replica runs it. */
export const RETENTION_PERIOD_MS = 24 * 3_600_000;
/** How long one run may hold the job before another replica may take it over. */
export const RETENTION_LEASE_MS = 30 * 60_000;
export const RETENTION_JOB = 'retention';
/**
 * Deleted per transaction, so a first purge of a big backlog never holds a lock (or, on SQLite,
 * the event loop) for long; the purge yields between batches.
 */
const BATCH = 200;

export interface PurgeCounts {
  approvals: number;
  announcements: number;
  confirmations: number;
  submissionKeys: number;
  delegations: number;
  templates: number;
  templateChanges: number;
}

/**
 * The port the purge needs; the store executes it without knowing why. The purge runs once per
 * period, fleet-wide, on a leased job claim.
 */
export interface RetentionStore extends LeasedJobs {
  /**
   * Applies the lifecycle's `retention-due` event for `before` to up to `limit` approvals: those
   * its rule's fence holds for (ended with no change since `before`, every announcement
   * delivered, no Request again still followed) are deleted with their announcements, in one
   * transaction; and with them what else names them or their people: the
   * workflow step's confirmation and replay key, and lanes no attempt holds or paces.
   */
  deleteEndedApprovals(
    before: Date,
    limit: number,
  ): Promise<{ approvals: number; announcements: number }>;
  /** Deletes settled workflow confirmations (started, or ended with their step told) made before `before`. */
  deleteSettledConfirmations(before: Date): Promise<number>;
  deleteSubmissionKeys(before: Date): Promise<number>;
  /** Deletes delegations that ended before `before`. */
  deleteEndedDelegations(before: Date): Promise<number>;
  /**
   * Deletes templates removed before `before` with all their changes, and every change made
   * before `before` to a live template but its last.
   */
  deleteOldTemplates(before: Date): Promise<{ templates: number; templateChanges: number }>;
}

/**
 * One purge, if this replica claims the period's run: returns what it deleted, or undefined when
 * another replica (or an earlier pass of this one) has run it in this period or is running it.
 * `stopping` is asked between batches: a stop (SIGTERM) never waits for a whole backlog, and
 * what is left goes at the next tick.
 */
export async function purgeExpired(
  store: RetentionStore,
  options: RetentionOptions,
  now: Date,
  stopping: () => boolean = () => false,
): Promise<PurgeCounts | undefined> {
  let claim = await store.claimJob(RETENTION_JOB, now, RETENTION_LEASE_MS);
  if (!claim) return undefined;
  const counts: PurgeCounts = {
    approvals: 0,
    announcements: 0,
    confirmations: 0,
    submissionKeys: 0,
    delegations: 0,
    templates: 0,
    templateChanges: 0,
  };
  try {
    counts.submissionKeys = await store.deleteSubmissionKeys(
      new Date(now.getTime() - SUBMISSION_KEY_KEEP_MS),
    );
    counts.delegations = await store.deleteEndedDelegations(
      new Date(now.getTime() - EXPIRED_DELEGATION_KEEP_MS),
    );
    if (options.retentionDays > 0) {
      const before = new Date(now.getTime() - options.retentionDays * 24 * 3_600_000);
      for (;;) {
        if (stopping()) {
          await store.abandonJob(claim);
          return counts;
        }
        const batch = await store.deleteEndedApprovals(before, BATCH);
        counts.approvals += batch.approvals;
        counts.announcements += batch.announcements;
        if (batch.approvals < BATCH) break;
        // Still ours? A run whose lease ran out (it was slow, or paused) stops here: another
        // replica has taken the job over, and two purges would only race for the same rows.
        const held = await store.holdJob(claim, RETENTION_LEASE_MS);
        if (!held) return counts;
        claim = held;
        // Let timers and requests in between batches.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      counts.confirmations = await store.deleteSettledConfirmations(before);
      const templates = await store.deleteOldTemplates(before);
      counts.templates = templates.templates;
      counts.templateChanges = templates.templateChanges;
    }
  } catch (error) {
    await store.abandonJob(claim).catch(() => undefined);
    throw error;
  }
  // A run taken over meanwhile finishes nothing: the run that holds the job now does.
  await store.finishJob(claim, now, RETENTION_PERIOD_MS);
  return counts;
}
