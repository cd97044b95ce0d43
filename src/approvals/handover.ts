import { type Person, sameLogin } from './person.ts';
import type { TrackedApproval } from './tracked-approval.ts';

/**
 * The approval service may give an approval to someone else (its administrators, or the approver
 * passing it on). A check that finds the service naming another approver than the recorded one
 * records them as the approver (the store's recordHandover, once, fenced by the check's claim):
 * from then on "the approver" is that person everywhere the app reads it (lists, Home, the access
 * policy's `approver`, reminders, the digest, escalation), the thread says so once, and they get
 * the approver's DM the first one got. Their reminders start from none, counted from when they
 * got it, and may escalate it to their own leader; an escalation already made stays (once per
 * approval: its leader was sent its title, and keeps seeing it).
 */
export interface Handover {
  /** Term of the approver who had it (TrackedApproval.parties.approver.term): the store records only from it. */
  fromTerm: number;
  /**
   * Who has it now: the service's login, with their chat account when the approval already knows
   * it (they had it before); otherwise delivery looks it up, as for an approver typed in as a login.
   */
  to: Person & { login: string };
  /** Who had it before `to`, oldest first: the approval's former approvers and its approver until now. */
  former: Person[];
}

/**
 * The handover a check's status shows, or undefined: only while it is pending and known, and only
 * when the service names an approver (older services name none) who is not the recorded one by
 * the one rule for logins (person.ts). One comparison per check; nothing to look up.
 */
export function handoverOf(
  approval: Pick<TrackedApproval, 'parties' | 'outcome'>,
  status: { decision: string; unknown: boolean; ended: boolean; approver?: string },
): Handover | undefined {
  const reported = status.approver;
  if (!reported || status.unknown || status.ended || status.decision !== 'pending')
    return undefined;
  if (approval.outcome.decision !== 'pending' || approval.outcome.tracking !== 'active')
    return undefined;
  if (sameLogin(reported, approval.parties.approver.login)) return undefined;
  const until: Person = {
    login: approval.parties.approver.login,
    chatId: approval.parties.approver.slackId,
  };
  const before = [...approval.parties.formerApprovers, until];
  // Handed back to someone who had it before: their account is known already.
  const back = before.find((p) => sameLogin(reported, p.login));
  const former = before.filter(
    (p, i) =>
      !sameLogin(p.login, reported) && before.findIndex((q) => sameLogin(q.login, p.login)) === i,
  );
  return {
    fromTerm: approval.parties.approver.term,
    to: { login: reported, chatId: back?.chatId ?? null },
    former,
  };
}
