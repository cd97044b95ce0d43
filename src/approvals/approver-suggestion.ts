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
  /**
   * How long the person may wait for a suggestion (default 6 s). The form is open meanwhile; past
   * this they get "pick one yourself" instead of a spinner for as long as the client retries.
   */
  deadlineMs?: number;
}

export class SuggestionTimeout extends Error {
  constructor(ms: number) {
    super(`no suggestion within ${ms} ms`);
    this.name = 'SuggestionTimeout';
  }
}

/**
 * Looks the requester up in the service and proposes their nearest leader as approver. Never
 * throws: a failed lookup is a kind of suggestion, so the form stays usable.
 */
export async function suggestApproverFor(
  deps: SuggestionDeps,
  requesterLogin: string,
): Promise<Suggestion> {
  const ms = deps.deadlineMs ?? 6000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<Suggestion>((resolve) => {
    timer = setTimeout(
      () => resolve({ kind: 'lookup-failed', error: new SuggestionTimeout(ms) }),
      ms,
    );
  });
  try {
    return await Promise.race([lookUp(deps, requesterLogin), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function lookUp(deps: SuggestionDeps, requesterLogin: string): Promise<Suggestion> {
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
