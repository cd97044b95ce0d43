import type { ApprovalService } from './approval-types.ts';
import type { Away } from './away-rule.ts';
import { loginKey, sameLogin } from './person.ts';
import { leadersOf } from './suggest-approver.ts';
import type { TrackedApproval } from './tracked-approval.ts';

/**
 * Escalation: once the approver has left `afterReminders` reminders unanswered, their own leader
 * gets one DM and the requester is told in the thread. The rule is here; the poll pass applies it
 * and the store records it once (a conditional update, with its announcements).
 */
export interface EscalationOptions {
  /** Reminders that must have gone unanswered; 0 never escalates. */
  afterReminders: number;
  /**
   * How long the last of them may go unanswered first: the reminders' own interval, so the
   * approver has as long to answer the last reminder as they had for each one before it.
   */
  answerWithinMs: number;
}

/** The person an approval is escalated to: the approver's leader, on the chat. */
export interface EscalationTarget {
  login: string;
  chatId: string;
}

/**
 * Whether an approval is due for escalation at `now`, by what the app recorded: still pending and
 * followed, its approver reachable, never escalated, and at least `afterReminders` reminders
 * recorded, the last of them at least `answerWithinMs` ago. The store checks again, when it
 * records, that that many reminders were actually delivered to the approver at least
 * `answerWithinMs` ago (a reminder that posted nothing or failed does not count, and one
 * delivered late has its full time to be answered).
 *
 * `reportedApprover` is the approver the service names now (older services name none). When it is
 * someone else than the recorded approver (the service gave it to another person), it is not due:
 * the reminders went to the recorded one, so the one who holds it now left none unanswered, and
 * their leader would be told something untrue. The check that finds that records the handover
 * instead (handover.ts), after which the new approver's own reminders count.
 */
export function escalationDue(
  approval: Pick<TrackedApproval, 'outcome' | 'parties' | 'followUp'>,
  now: Date,
  options: EscalationOptions,
  reportedApprover?: string,
): boolean {
  if (options.afterReminders <= 0) return false;
  if (approval.followUp.escalatedAt !== null) return false;
  if (approval.outcome.decision !== 'pending' || approval.outcome.tracking !== 'active')
    return false;
  // Unreachable approvers get no reminders; their requester was told and offered Request again.
  if (approval.parties.approver.unreachableSince !== null) return false;
  if (reportedApprover && !sameLogin(reportedApprover, approval.parties.approver.login))
    return false;
  if (
    approval.followUp.remindersSent < options.afterReminders ||
    approval.followUp.lastRemindedAt === null
  )
    return false;
  return now.getTime() - approval.followUp.lastRemindedAt.getTime() >= options.answerWithinMs;
}

export interface EscalationDeps {
  service: Pick<ApprovalService, 'getDepartment'>;
  /** The chat account of a service login, or null when that person is not in the chat. */
  findChatUser(login: string): Promise<string | null>;
  /** Whether a chat user is away now (see away-rule.ts); without it nobody is. */
  awayOf?(chatId: string): Promise<Away | null>;
}

/** How many department lookups a walk up the chain may take (each level is one). */
const MAX_LEVELS = 4;

/**
 * Whom to escalate to: the nearest leader in the approver's own chain (the service's department
 * lookup of the approver) who is not the approver, is on the chat and is not away; when that one
 * is not, the next one up. Never the requester or the approver, by login or by chat account: a
 * requester who is the approver's leader is passed over for their own leader. Undefined when there
 * is nobody (the top of the chain was reached, or everyone above is away or not on the chat): then
 * nobody is told anything. Rejects when the service or the chat cannot answer now, so that it is
 * asked again at the next check, and with `signal`'s reason once it is aborted: no lookup starts
 * after that (the poll pass's claim on the approval is running out).
 */
export async function escalationTarget(
  deps: EscalationDeps,
  approval: Pick<TrackedApproval, 'parties'>,
  signal?: AbortSignal,
): Promise<EscalationTarget | undefined> {
  const key = loginKey;
  const requester = key(approval.parties.requester.login);
  // A login that differs from theirs may still be them on the chat (a linked account): their
  // accounts now, as the identities give them (person.ts), not those recorded as it started.
  const parties = new Set(
    await Promise.all([
      deps.findChatUser(approval.parties.requester.login),
      deps.findChatUser(approval.parties.approver.login),
    ]),
  );
  parties.delete(null);
  const seen = new Set([key(approval.parties.approver.login)]);
  let current = approval.parties.approver.login;
  for (let level = 0; level < MAX_LEVELS; level++) {
    signal?.throwIfAborted();
    const above = leadersOf(await deps.service.getDepartment(current), current).filter(
      (login) => !seen.has(key(login)),
    );
    if (above.length === 0) return undefined;
    for (const leader of above) {
      seen.add(key(leader));
      // The requester is a step of the chain, never its end: the walk goes on above them.
      if (key(leader) === requester) continue;
      signal?.throwIfAborted();
      const chatId = await deps.findChatUser(leader);
      if (!chatId || parties.has(chatId)) continue;
      signal?.throwIfAborted();
      if (await isAway(deps, chatId)) continue;
      return { login: leader, chatId };
    }
    current = above[above.length - 1] ?? current;
  }
  return undefined;
}

/** Away-ness is advice: a profile that cannot be read counts as present. */
async function isAway(deps: Pick<EscalationDeps, 'awayOf'>, chatId: string): Promise<boolean> {
  try {
    return Boolean(await deps.awayOf?.(chatId));
  } catch {
    return false;
  }
}

/**
 * Whether an approval waits for the person with `login` only because it was escalated to them: it
 * waits for its approver, whom only they can be reminded of. A list that shows it to them says so
 * ("waiting for Maria for 3 days"), never that it waits for them; a digest does not list it.
 */
export function escalatedOnlyTo(
  approval: Pick<TrackedApproval, 'parties' | 'followUp'>,
  login: string | null,
): boolean {
  return (
    !sameLogin(approval.parties.approver.login, login) &&
    sameLogin(approval.followUp.escalatedTo?.login, login)
  );
}
