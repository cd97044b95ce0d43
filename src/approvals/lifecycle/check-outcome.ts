import { handoverOf } from '../handover.ts';
import type { TrackedApproval } from '../tracked-approval.ts';
import type { EventOf } from './events.ts';

/** What a check of the service answered about one approval. */
export interface SeenStatus {
  decision: TrackedApproval['outcome']['decision'];
  ended: boolean;
  unknown: boolean;
  /** The approver the service names now (older services name none). */
  approver?: string;
}

/** How long an approval is followed. */
export interface FollowPolicy {
  giveUpAfterMs: number;
  /** An approval the service has not known for this long is no longer followed. */
  unknownForMs: number;
}

/** What a check may see: an event of the lifecycle, or nothing that ends or moves the approval. */
export type SeenEvent =
  | EventOf<'decided' | 'closed' | 'gave-up' | 'handed-over'>
  | { kind: 'still-pending'; unknown: boolean };

/**
 * What a successful check saw, as the event it is: a decision, closed without one, vanished,
 * given up, handed over; or nothing that ends or moves it (`still-pending`: reminders and
 * escalation may then be due, reminders.ts). In this order: a decision always counts, and the
 * give-up comes after what the service said, so a last-minute decision counts. `nextCheckAt`:
 * when to look again, for the events that keep following it.
 */
export function whatTheCheckSaw(
  approval: TrackedApproval,
  status: SeenStatus,
  policy: FollowPolicy,
  now: Date,
  nextCheckAt: Date,
): SeenEvent {
  if (status.decision !== approval.outcome.decision)
    return {
      kind: 'decided',
      decision: status.decision,
      decidedBy: status.approver ?? approval.parties.approver.login,
      ended: status.ended,
      nextCheckAt,
    };
  if (status.ended && status.decision === 'pending') return { kind: 'closed', reason: 'ended' };
  const unknownSince = approval.outcome.unknownSince ?? now;
  if (status.unknown && now.getTime() - unknownSince.getTime() >= policy.unknownForMs)
    return { kind: 'closed', reason: 'vanished' };
  if (now.getTime() - approval.request.createdAt.getTime() >= policy.giveUpAfterMs)
    return { kind: 'gave-up' };
  // The service gave it to someone else: they are the approver from now on (handover.ts).
  const handover = handoverOf(approval, status);
  if (handover) return { kind: 'handed-over', handover, nextCheckAt };
  return { kind: 'still-pending', unknown: status.unknown };
}
