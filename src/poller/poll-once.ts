import { ApprovalServiceError } from '../approval-service/approval-service-error.ts';
import type { AnnouncementDispatcher } from '../approvals/announcement-dispatcher.ts';
import type { ApprovalStore } from '../approvals/approval-store.ts';
import type { ApprovalService } from '../approvals/approval-types.ts';
import {
  nextCheckAfterFailure,
  nextCheckAt,
  type ReminderOptions,
  reminderDue,
} from '../approvals/check-schedule.ts';
import type { TrackedApproval } from '../approvals/tracked-approval.ts';

export interface PollOptions {
  concurrency: number;
  maxIntervalMs: number;
  giveUpAfterMs: number;
  /** At most this many approvals per pass, so one pass stays short. */
  batchSize?: number;
  reminders?: ReminderOptions;
}

export interface PollDeps {
  store: ApprovalStore;
  service: Pick<ApprovalService, 'getStatus'>;
  dispatcher: AnnouncementDispatcher;
  logger: {
    debug(obj: object, msg: string): void;
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
  };
}

export interface PollCounts {
  checked: number;
  changed: number;
  failed: number;
  gaveUp: number;
  reminded: number;
  /** Claimed but left for later because the service was found down during this pass. */
  deferred: number;
  announced: number;
}

const LEASE_MS = 5 * 60_000;
// After this many checks in a row find the service unavailable, the pass stops asking: one outage
// costs a few requests, not one per open approval, and nothing is posted to any thread.
const OUTAGE_THRESHOLD = 3;

/**
 * One poll pass at `now`: claims the approvals due, asks the service about each (a few at a time),
 * records each change with its announcement, then delivers what is pending.
 */
export async function pollOnce(
  deps: PollDeps,
  options: PollOptions,
  now: Date,
): Promise<PollCounts> {
  const counts: PollCounts = {
    checked: 0,
    changed: 0,
    failed: 0,
    gaveUp: 0,
    reminded: 0,
    deferred: 0,
    announced: 0,
  };
  const due = await deps.store.claimDue(now, options.batchSize ?? 200, LEASE_MS);
  let unavailableInARow = 0;
  const queue = [...due];

  async function check(approval: TrackedApproval): Promise<void> {
    if (unavailableInARow >= OUTAGE_THRESHOLD) {
      counts.deferred++;
      await deps.store.recordCheck(approval.djbh, {
        now,
        nextCheckAt: nextCheckAfterFailure(1, now, options),
        failed: false,
      });
      return;
    }
    if (now.getTime() - approval.createdAt.getTime() >= options.giveUpAfterMs) {
      await deps.store.giveUp(approval.djbh, now);
      counts.gaveUp++;
      return;
    }
    try {
      const status = await deps.service.getStatus(approval.djbh);
      unavailableInARow = 0;
      counts.checked++;
      if (status.unknown) {
        deps.logger.warn(
          { djbh: approval.djbh },
          'the approval service does not know this approval number',
        );
      }
      if (status.decision !== approval.decision) {
        counts.changed++;
        await deps.store.recordDecision(approval.djbh, {
          decision: status.decision,
          decidedBy: status.approver ?? approval.approverLogin,
          ended: status.ended,
          now,
          nextCheckAt: nextCheckAt(approval.createdAt, now, options),
        });
        return;
      }
      const reminder =
        options.reminders && status.decision === 'pending'
          ? reminderDue(approval, now, options.reminders)
          : undefined;
      if (reminder !== undefined) {
        await deps.store.recordReminder(approval.djbh, reminder, now);
        counts.reminded++;
      }
      await deps.store.recordCheck(approval.djbh, {
        now,
        nextCheckAt: nextCheckAt(approval.createdAt, now, options),
        failed: false,
      });
    } catch (error) {
      counts.failed++;
      if (error instanceof ApprovalServiceError && error.kind === 'unavailable')
        unavailableInARow++;
      deps.logger.warn(
        { djbh: approval.djbh, error: error instanceof Error ? error.message : String(error) },
        'status check failed',
      );
      await deps.store.recordCheck(approval.djbh, {
        now,
        nextCheckAt: nextCheckAfterFailure(approval.checkFailures + 1, now, options),
        failed: true,
      });
    }
  }

  const workers = Array.from({ length: Math.min(options.concurrency, queue.length) }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) await check(next);
  });
  await Promise.all(workers);
  const delivered = await deps.dispatcher.deliverPending();
  counts.announced = delivered.sent + delivered.recovered;
  return counts;
}
