import type { ApprovalService } from './approval-types.ts';
import type { Away } from './away-rule.ts';
import { currentDelegate, type Delegations } from './delegation.ts';
import { loginKey } from './person.ts';
import { knownToService } from './service-directory.ts';
import { departmentChain, leadersOf } from './suggest-approver.ts';

/** Whose delegate the suggested approver is, and until when they are away. */
export interface DelegatedBy {
  login: string;
  until: Date;
}

/** What the app can say about who should approve, and why. */
export type Suggestion =
  | {
      kind: 'suggested';
      chain: string[];
      approverLogin: string;
      approverChatId: string;
      /** The suggested approver is away too: every leader up the chain is. */
      away?: Away;
      /** The nearest leader, away, passed over for the next one up who is not. */
      passedOver?: { login: string; chatId: string; away: Away };
      /** The nearest leader set a delegate while away (delegation.ts): the approver is theirs. */
      delegatedBy?: DelegatedBy;
    }
  | {
      kind: 'leader-not-in-chat';
      chain: string[];
      approverLogin: string;
      delegatedBy?: DelegatedBy;
    }
  | { kind: 'no-leader'; chain: string[] }
  | { kind: 'unknown-person' }
  | { kind: 'lookup-failed'; error: unknown };

export interface SuggestionDeps {
  service: Pick<ApprovalService, 'getDepartment'>;
  /** The chat account of a service login, or null when that person is not in the chat. */
  findChatUser(login: string): Promise<string | null>;
  /** Whether a chat user is away now (see away-rule.ts); without it nobody is. */
  awayOf?(chatId: string): Promise<Away | null>;
  /**
   * The delegations on record (delegation.ts) and the clock they are read at; without them nobody
   * has delegated. A delegate comes before the chat-status rule: it is what the leader asked for.
   */
  delegations?: Pick<Delegations, 'inForceAt'>;
  now?: () => Date;
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
    const leader = leadersOf(department, requesterLogin)[0];
    if (!knownToService(department)) return { kind: 'unknown-person' };
    if (!leader) return { kind: 'no-leader', chain };
    const delegated = await currentDelegate(
      deps,
      leader,
      deps.now?.() ?? new Date(),
      requesterLogin,
    );
    const first = delegated.via[0];
    if (first) return await toDelegate(deps, chain, delegated.approver, first);
    const chatId = await deps.findChatUser(leader);
    if (!chatId) return { kind: 'leader-not-in-chat', chain, approverLogin: leader };
    const suggested = { kind: 'suggested' as const, chain };
    const away = await awayOrNull(deps, chatId);
    if (!away) return { ...suggested, approverLogin: leader, approverChatId: chatId };
    const next = await availableAbove(deps, leader, [requesterLogin]);
    return next
      ? {
          ...suggested,
          approverLogin: next.login,
          approverChatId: next.chatId,
          passedOver: { login: leader, chatId, away },
        }
      : { ...suggested, approverLogin: leader, approverChatId: chatId, away };
  } catch (error) {
    return { kind: 'lookup-failed', error };
  }
}

/**
 * The leader's delegate, as named: their chat status is not asked (the leader chose them for
 * while they are away), and the leader's status no longer matters.
 */
async function toDelegate(
  deps: SuggestionDeps,
  chain: string[],
  delegate: string,
  first: { from: string; until: Date },
): Promise<Suggestion> {
  const delegatedBy = { login: first.from, until: first.until };
  const chatId = await deps.findChatUser(delegate);
  if (!chatId) return { kind: 'leader-not-in-chat', chain, approverLogin: delegate, delegatedBy };
  return { kind: 'suggested', chain, approverLogin: delegate, approverChatId: chatId, delegatedBy };
}

/** How many department lookups a walk up the chain may take (each level is one). */
const MAX_LEVELS = 4;

/**
 * The nearest leader above `login` (their leaders, then those leaders' leaders, from the service's
 * department lookup) who is in the chat and not away; never `login` itself or one of `besides`
 * (logins). Undefined when there is none. Used when the suggested or the picked approver is away.
 */
export async function availableAbove(
  deps: Pick<SuggestionDeps, 'service' | 'findChatUser' | 'awayOf'>,
  login: string,
  besides: readonly string[],
): Promise<{ login: string; chatId: string } | undefined> {
  const seen = new Set([login, ...besides].map(loginKey));
  let current = login;
  for (let level = 0; level < MAX_LEVELS; level++) {
    const above = leadersOf(await deps.service.getDepartment(current), current).filter(
      (l) => !seen.has(loginKey(l)),
    );
    if (above.length === 0) return undefined;
    for (const leader of above) {
      seen.add(loginKey(leader));
      const chatId = await deps.findChatUser(leader);
      if (chatId && !(await awayOrNull(deps, chatId))) return { login: leader, chatId };
    }
    current = above[above.length - 1] ?? current;
  }
  return undefined;
}

/** Away-ness is advice: a profile that cannot be read counts as present, and nothing blocks. */
async function awayOrNull(
  deps: Pick<SuggestionDeps, 'awayOf'>,
  chatId: string,
): Promise<Away | null> {
  try {
    return (await deps.awayOf?.(chatId)) ?? null;
  } catch {
    return null;
  }
}
