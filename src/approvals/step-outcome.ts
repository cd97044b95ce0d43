import type { TrackedApproval } from './tracked-approval.ts';

/** What a Workflow Builder step that started an approval ends with, once the approval has ended. */
export type StepOutcome =
  | {
      ok: true;
      approvalNumber: string;
      /** `ended`: the service closed the approval without a decision. */
      decision: 'approved' | 'rejected' | 'ended';
      /** The service login of who decided; null when nobody did. */
      decidedByLogin: string | null;
      /** Unix seconds, as Slack's timestamp type takes it. */
      decidedAt: number;
    }
  | {
      ok: false;
      /** `gave-up`: undecided for too long; `vanished`: the service no longer knows the number. */
      reason: 'gave-up' | 'vanished';
    };

/**
 * The outcome of an ended approval, read from its record: a decision or a close is a success the
 * workflow can branch on; an approval the app stopped following is an error, since nobody knows
 * how it ends.
 */
export function stepOutcome(approval: TrackedApproval): StepOutcome {
  if (approval.outcome.tracking === 'gave-up') return { ok: false, reason: 'gave-up' };
  if (approval.outcome.decision === 'pending' && approval.outcome.unknownSince !== null)
    return { ok: false, reason: 'vanished' };
  const { decision } = approval.outcome;
  const decidedAt = Math.floor(approval.outcome.changedAt.getTime() / 1000);
  if (decision === 'pending')
    return {
      ok: true,
      approvalNumber: approval.djbh,
      decision: 'ended',
      decidedByLogin: null,
      decidedAt,
    };
  return {
    ok: true,
    approvalNumber: approval.djbh,
    decision,
    decidedByLogin: approval.outcome.decidedBy ?? approval.parties.approver.login,
    decidedAt,
  };
}
