import type { TrackedApproval } from './tracked-approval.ts';

/**
 * Whether an approval is over without a yes, so its requester may be offered "Request again":
 * rejected, ended by the service without a decision, given up on (nobody decided in time), or
 * forgotten by the service. An approved or still-running approval is not.
 */
export function mayRequestAgain(a: Pick<TrackedApproval, 'decision' | 'tracking'>): boolean {
  if (a.decision === 'rejected') return true;
  return a.decision === 'pending' && a.tracking !== 'active';
}
