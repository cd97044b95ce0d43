import type { ApprovalRepository } from './approval-repository.ts';
import { isWorkingTime, nextWorkingStart, type WorkingHours } from './working-hours.ts';

/**
 * When to ask the service about an approval again. The service has no notifications, so we poll;
 * the schedule follows when a decision is likely, and keeps the rest cheap:
 * - younger than 10 minutes: at every tick of the poll schedule;
 * - hot (its approver just followed a link from Slack to the service, so is likely deciding now):
 *   every HOT.firstEveryMs for the window's first minutes, then every HOT.thenEveryMs until it ends;
 * - young (its first week, about five working days) and inside the approver's working hours, when
 *   nearly every decision is made: at least every `attentive.everyMs`;
 * - otherwise after a tenth of its age (1 min at 10 min old, 6 min at 1 h, 1 h at 10 h), never more
 *   than `maxIntervalMs` (default 1 h), and, while young, no later than the approver's next working
 *   start, so a decision made first thing in the morning is seen within minutes;
 * - after a failed check: 30 s, doubling with each failure in a row, up to `maxIntervalMs`.
 * What this costs the service is measured by `npm run bench` (GETs per approval-day).
 */

export interface ScheduleOptions {
  maxIntervalMs: number;
  /** Working hours make young approvals checked often inside them; absent: the age rule alone. */
  attentive?: AttentiveOptions;
}

export interface AttentiveOptions {
  hours: WorkingHours;
  /** At least this often inside the approver's working hours. */
  everyMs: number;
  /** For approvals younger than this. */
  whileYoungerThanMs: number;
}

/** What the schedule reads of an approval. */
export interface ScheduleFacts {
  createdAt: Date;
  hotUntil?: Date | null;
}

export const FRESH_AGE_MS = 10 * 60_000;
const FAILURE_BASE_MS = 30_000;

/**
 * A click on a link to the service marks the approvals waiting for that approver hot for
 * `windowMs` (at most `perApprover` of them, the newest); a hot pass every few seconds checks
 * those due, at most `perPass` at a time, so a burst of clicks cannot starve the regular pass.
 * People decide within a few minutes of the click: the first minutes are checked most often.
 */
export const HOT = {
  windowMs: 15 * 60_000,
  firstMs: 5 * 60_000,
  firstEveryMs: 5_000,
  thenEveryMs: 20_000,
  perApprover: 10,
  perPass: 40,
} as const;

export const ATTENTIVE_DEFAULTS = {
  everyMs: 4 * 60_000,
  whileYoungerThanMs: 7 * 86_400_000,
} as const;

/**
 * When to check next after a check at `now` that found nothing to end following it. `zone` is the
 * approver's time zone for working hours (the default zone when unknown).
 */
export function nextCheckAt(
  approval: ScheduleFacts,
  now: Date,
  options: ScheduleOptions,
  zone?: string,
): Date {
  const at = now.getTime();
  const age = at - approval.createdAt.getTime();
  // Due at the next tick, not again in this pass: just after `now`, so the rows a pass has
  // checked leave the due range its claims walk.
  if (age < FRESH_AGE_MS) return new Date(at + 1);
  const hot = hotInterval(approval.hotUntil, now);
  if (hot !== undefined) return new Date(at + hot);
  const byAge = Math.min(options.maxIntervalMs, Math.round(age / 10));
  const attentive = options.attentive;
  if (!attentive || age >= attentive.whileYoungerThanMs) return new Date(at + byAge);
  const tz = zone ?? attentive.hours.defaultTimeZone;
  if (isWorkingTime(now, tz, attentive.hours))
    return new Date(at + Math.min(byAge, attentive.everyMs));
  const start = nextWorkingStart(now, tz, attentive.hours)?.getTime();
  return new Date(start !== undefined && start < at + byAge ? start : at + byAge);
}

/** How soon to check a hot approval again; undefined when it is not hot at `now`. */
export function hotInterval(hotUntil: Date | null | undefined, now: Date): number | undefined {
  if (!hotUntil || hotUntil.getTime() <= now.getTime()) return undefined;
  const sinceMark = HOT.windowMs - (hotUntil.getTime() - now.getTime());
  return sinceMark < HOT.firstMs ? HOT.firstEveryMs : HOT.thenEveryMs;
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
 * The reminders' schedule: the number of the reminder due now for a pending approval, or undefined
 * when none is. Whether one is sent at all is decided in lifecycle/reminders.ts (followUpsDue),
 * which asks this. Counted
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

/**
 * An approver followed a link from Slack to the service: they are likely deciding in the next few
 * minutes, so the approvals waiting for them (the newest HOT.perApprover) are checked every few
 * seconds for HOT.windowMs. Only the clicker's own approvals are marked; nothing else changes.
 */
export async function approverWentToDecide(
  deps: { store: Pick<ApprovalRepository, 'markHot'>; now: () => Date },
  approverLogin: string,
): Promise<number> {
  const now = deps.now();
  const until = new Date(now.getTime() + HOT.windowMs);
  return deps.store.markHot(approverLogin, now, until, HOT.perApprover);
}
