import type { ChainOfStep, ChainStep } from './steps.ts';
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
      /** The step's approval that ended so, in a request in several steps. */
      djbh?: string;
    }
  | {
      ok: false;
      /** A step of a request in several steps could not be started: the request stopped there. */
      reason: 'step-failed';
      position: number;
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

/**
 * The outcome of a request in several steps that a workflow step started, once the request ended
 * (steps.ts): approved only when every step was approved (or skipped), rejected at the step that
 * rejected it, and otherwise as the step that stopped it ended. The number is the first step's
 * (the request's); who decided and when are those of the step that ended it. Undefined while the
 * request goes on.
 */
export function chainStepOutcome(
  first: TrackedApproval,
  chain: Pick<ChainOfStep, 'outcome' | 'endedAt'>,
  steps: readonly ChainStep[],
): StepOutcome | undefined {
  if (!chain.outcome) return undefined;
  const ending = [...steps].reverse().find((s) => s.state === 'decided' || s.state === 'failed');
  if (ending?.state === 'failed')
    return { ok: false, reason: 'step-failed', position: ending.position };
  const how = ending?.decision as string | undefined;
  if (how === 'gave-up' || how === 'vanished')
    return { ok: false, reason: how, djbh: ending?.djbh ?? first.djbh };
  const decidedAt = Math.floor((chain.endedAt ?? first.outcome.changedAt).getTime() / 1000);
  const decision =
    chain.outcome === 'approved' ? 'approved' : chain.outcome === 'rejected' ? 'rejected' : 'ended';
  return {
    ok: true,
    approvalNumber: first.djbh,
    decision,
    decidedByLogin:
      decision === 'ended' || !ending ? null : (ending.decidedBy ?? ending.approverLogin),
    decidedAt,
  };
}
