import type { ApprovalService } from './approval-types.ts';
import { availableAbove } from './approver-suggestion.ts';
import type { Away } from './away-rule.ts';
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
 * records, that that many reminders were actually delivered (a reminder that posted nothing or
 * failed does not count).
 */
export function escalationDue(
  approval: Pick<
    TrackedApproval,
    | 'decision'
    | 'tracking'
    | 'approverUnreachableSince'
    | 'escalatedAt'
    | 'remindersSent'
    | 'lastRemindedAt'
  >,
  now: Date,
  options: EscalationOptions,
): boolean {
  if (options.afterReminders <= 0) return false;
  if (approval.escalatedAt !== null) return false;
  if (approval.decision !== 'pending' || approval.tracking !== 'active') return false;
  // Unreachable approvers get no reminders; their requester was told and offered Request again.
  if (approval.approverUnreachableSince !== null) return false;
  if (approval.remindersSent < options.afterReminders || approval.lastRemindedAt === null)
    return false;
  return now.getTime() - approval.lastRemindedAt.getTime() >= options.answerWithinMs;
}

export interface EscalationDeps {
  service: Pick<ApprovalService, 'getDepartment'>;
  /** The chat account of a service login, or null when that person is not in the chat. */
  findChatUser(login: string): Promise<string | null>;
  /** Whether a chat user is away now (see away-rule.ts); without it nobody is. */
  awayOf?(chatId: string): Promise<Away | null>;
}

/**
 * Whom to escalate to: the nearest leader in the approver's own chain (the service's department
 * lookup of the approver) who is not the approver, is on the chat and is not away; when that one
 * is not, the next one up. Never the requester or the approver, by login or by chat account.
 * Undefined when there is nobody (the approver is at the top, or everyone above is away or not on
 * the chat): then nobody is told anything. Rejects when the service or the chat cannot answer
 * now, so that it is asked again at the next check.
 */
export async function escalationTarget(
  deps: EscalationDeps,
  approval: Pick<
    TrackedApproval,
    'approverLogin' | 'approverSlackId' | 'requesterLogin' | 'requesterSlackId'
  >,
): Promise<EscalationTarget | undefined> {
  const parties = new Set([approval.requesterSlackId, approval.approverSlackId]);
  return availableAbove(
    {
      service: deps.service,
      // A login that differs from the requester's or the approver's may still be theirs on the
      // chat (a linked account): the chat account decides.
      findChatUser: async (login) => {
        const chatId = await deps.findChatUser(login);
        return chatId && !parties.has(chatId) ? chatId : null;
      },
      ...(deps.awayOf ? { awayOf: deps.awayOf } : {}),
    },
    approval.approverLogin,
    [approval.requesterLogin],
  );
}
