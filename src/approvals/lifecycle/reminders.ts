import { type ReminderOptions, reminderDue } from '../check-schedule.ts';
import { type EscalationOptions, escalationDue } from '../escalation.ts';
import type { TrackedApproval } from '../tracked-approval.ts';
import { isWorkingTime, nextWorkingStart, type WorkingHours } from '../working-hours.ts';
import type { SeenStatus } from './check-outcome.ts';

/**
 * Where a reminder is decided, once: whether one is sent, and when. Reminders (and escalation)
 * go to an approver of an approval still pending and followed, that the service still knows, and
 * that Slack did not say cannot be reached (the requester was told instead); on the schedule of
 * check-schedule.ts's reminderDue; and only inside the approver's working hours (outside them the
 * next check comes at their next working start). The dispatcher asks `stillWorthReminding` again
 * as a reminder goes out (a decision may have come meanwhile).
 */
export interface FollowUpPolicy {
  reminders?: ReminderOptions;
  escalation?: EscalationOptions;
  /** Reminders and escalation only inside these; absent: on the clock. */
  workingHours?: WorkingHours;
}

/** Whether the approval is one whose approver may still be reminded (or escalated over). */
export function stillWorthReminding(
  approval: Pick<TrackedApproval, 'outcome' | 'parties'>,
): boolean {
  return (
    approval.outcome.decision === 'pending' &&
    approval.outcome.tracking === 'active' &&
    !approval.parties.approver.unreachableSince
  );
}

/** What is due by the clock after a check that found it still pending; working hours come next. */
export interface FollowUpsDue {
  /** The number of the reminder due, if one is. */
  reminder?: number;
  escalation: boolean;
}

export function followUpsDue(
  approval: TrackedApproval,
  status: SeenStatus,
  policy: FollowUpPolicy,
  now: Date,
): FollowUpsDue {
  const known = status.decision === 'pending' && !status.unknown;
  const reminder =
    policy.reminders && known && stillWorthReminding(approval)
      ? reminderDue(
          {
            createdAt: approval.request.createdAt,
            approverSince: approval.parties.approver.since,
            ...approval.followUp,
          },
          now,
          policy.reminders,
        )
      : undefined;
  const escalation =
    policy.escalation !== undefined &&
    known &&
    escalationDue(approval, now, policy.escalation, status.approver);
  return { ...(reminder !== undefined ? { reminder } : {}), escalation };
}

/**
 * When `now` is outside the approver's working hours in `zone`: their next working start (or
 * `fallbackMs` from now when the hours name no working day: nothing is ever due, look again at the
 * usual pace); undefined inside them, or without working hours.
 */
export function heldForWorkingHours(
  now: Date,
  zone: string,
  policy: FollowUpPolicy,
  fallbackMs: number,
): Date | undefined {
  const hours = policy.workingHours;
  if (!hours || isWorkingTime(now, zone, hours)) return undefined;
  return nextWorkingStart(now, zone, hours) ?? new Date(now.getTime() + fallbackMs);
}
