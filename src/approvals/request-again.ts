import type { TrackedApproval } from './tracked-approval.ts';

/**
 * Whether an approval is over without a yes, so its requester may be offered "Request again":
 * rejected, ended by the service without a decision, given up on (nobody decided in time), or
 * forgotten by the service; or still pending with an approver the chat cannot reach (deactivated,
 * not on the chat), who will not be reminded or escalated to, so asking someone else is the way on.
 * An approved approval, or one still running with a reachable approver, is not; nor one already
 * requested again (once is enough: its message links to the new request instead).
 */
export function mayRequestAgain(
  a: Pick<TrackedApproval, 'outcome' | 'parties' | 'request'>,
): boolean {
  if (a.request.requestedAgainAs) return false;
  if (a.outcome.decision === 'rejected') return true;
  if (a.outcome.decision !== 'pending') return false;
  return a.outcome.tracking !== 'active' || a.parties.approver.unreachableSince !== null;
}
