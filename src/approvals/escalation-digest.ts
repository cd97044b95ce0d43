import { escalatedOnlyTo } from './escalation.ts';
import type { TrackedApproval } from './tracked-approval.ts';

/**
 * A leader gets their escalations together: several approvals escalated to one leader reach them
 * as one DM listing them ("waiting for Maria for 3 days"), the way an approver gets one reminder
 * digest a day (reminder-digest.ts, whose `reminderDelivery` decides for escalations too: alone,
 * as the day's digest, or inside the digest already posted that day, in the leader's time zone).
 * Each escalation is still recorded on its own, and its thread note still says it went.
 */

/**
 * What an escalation digest to the leader with `login` lists of the approvals the store finds for
 * them (those they approve, and those escalated to them): only those escalated to them, each
 * still waiting for its own approver. One they approve themselves is their reminder digest's.
 * Each listed approval must also pass the audience check on its own (audience.ts): the caller's.
 */
export function escalationEntries(
  waiting: readonly TrackedApproval[],
  login: string,
): TrackedApproval[] {
  return waiting.filter((a) => escalatedOnlyTo(a, login));
}
