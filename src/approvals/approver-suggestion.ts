import type { ApprovalService } from './approval-types.ts';
import { departmentChain, suggestApprover } from './suggest-approver.ts';

/** What the app can say about who should approve, and why. */
export type Suggestion =
  | { kind: 'suggested'; chain: string[]; approverLogin: string; approverChatId: string }
  | { kind: 'leader-not-in-chat'; chain: string[]; approverLogin: string }
  | { kind: 'no-leader'; chain: string[] }
  | { kind: 'unknown-person' }
  | { kind: 'lookup-failed'; error: unknown };

export interface SuggestionDeps {
  service: Pick<ApprovalService, 'getDepartment'>;
  /** The chat account of a service login, or null when that person is not in the chat. */
  findChatUser(login: string): Promise<string | null>;
}

/**
 * Looks the requester up in the service and proposes their nearest leader as approver. Never
 * throws: a failed lookup is a kind of suggestion, so the form stays usable.
 */
export async function suggestApproverFor(
  deps: SuggestionDeps,
  requesterLogin: string,
): Promise<Suggestion> {
  try {
    const department = await deps.service.getDepartment(requesterLogin);
    const chain = departmentChain(department);
    const leader = suggestApprover(department, requesterLogin);
    // The service invents an empty record for people it does not know.
    if (chain.length === 0 && !leader) return { kind: 'unknown-person' };
    if (!leader) return { kind: 'no-leader', chain };
    const chatId = await deps.findChatUser(leader);
    return chatId
      ? { kind: 'suggested', chain, approverLogin: leader, approverChatId: chatId }
      : { kind: 'leader-not-in-chat', chain, approverLogin: leader };
  } catch (error) {
    return { kind: 'lookup-failed', error };
  }
}
