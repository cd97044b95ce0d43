/**
 * When to ask the service about an approval again. The service has no notifications, so we poll;
 * the schedule keeps young approvals fresh and old ones cheap:
 * - younger than 10 minutes: at every tick of the poll schedule;
 * - older: after a tenth of its age (1 min at 10 min old, 6 min at 1 h, 1 h at 10 h), never more
 *   than `maxIntervalMs` (default 1 h);
 * - after a failed check: 30 s, doubling with each failure in a row, up to `maxIntervalMs`.
 */

export interface ScheduleOptions {
  maxIntervalMs: number;
}

export const FRESH_AGE_MS = 10 * 60_000;
const FAILURE_BASE_MS = 30_000;

export function nextCheckAt(createdAt: Date, now: Date, options: ScheduleOptions): Date {
  const age = now.getTime() - createdAt.getTime();
  // Due at the next tick, not again in this pass: just after `now`, so the rows a pass has
  // checked leave the due range its claims walk.
  if (age < FRESH_AGE_MS) return new Date(now.getTime() + 1);
  return new Date(now.getTime() + Math.min(options.maxIntervalMs, Math.round(age / 10)));
}

export function nextCheckAfterFailure(
  failuresInARow: number,
  now: Date,
  options: ScheduleOptions,
): Date {
  const delay = FAILURE_BASE_MS * 2 ** Math.max(0, failuresInARow - 1);
  return new Date(now.getTime() + Math.min(options.maxIntervalMs, delay));
}

export interface ReminderOptions {
  afterMs: number;
  intervalMs: number;
  max: number;
}

/**
 * The number of the reminder due now for a pending approval, or undefined when none is. Counted
 * for its current approver: one the service gave it to (handover.ts) starts from none, `afterMs`
 * after they got it (`approverSince`).
 */
export function reminderDue(
  approval: {
    createdAt: Date;
    approverSince?: Date | null;
    remindersSent: number;
    lastRemindedAt: Date | null;
  },
  now: Date,
  options: ReminderOptions,
): number | undefined {
  if (approval.remindersSent >= options.max) return undefined;
  const since = approval.approverSince ?? approval.createdAt;
  if (now.getTime() - since.getTime() < options.afterMs) return undefined;
  if (
    approval.lastRemindedAt &&
    now.getTime() - approval.lastRemindedAt.getTime() < options.intervalMs
  )
    return undefined;
  return approval.remindersSent + 1;
}
