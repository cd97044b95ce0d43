import type { WebClient } from '@slack/web-api';
import type { ConversationMembership } from '../../approvals/access-policy.ts';
import { AppError } from '../../errors.ts';
import { BoundedMap } from './bounded.ts';

/** How long a conversation's member list is trusted: someone removed is out within this. */
export const MEMBERS_TTL_MS = 60_000;
/**
 * How long Slack's failure to list a conversation is kept: every stranger's question about it
 * would otherwise cost up to MAX_PAGES calls while Slack is already refusing.
 */
export const FAILURE_TTL_MS = 10_000;
const MAX_CONVERSATIONS = 1000;
// conversations.members pages hold at most 999; 50 pages cover channels of ~50,000 people.
const PAGE_SIZE = 999;
const MAX_PAGES = 50;
// Slack's answers that mean "nobody can be shown to be in it": the conversation is gone, or is
// of a kind the method does not list. Anything else (rate limits, outages) means "ask again".
const NO_MEMBERS = new Set(['channel_not_found', 'method_not_supported_for_channel_type']);

/** A conversation bigger than MAX_PAGES pages: it will not be smaller in a few seconds. */
class TooManyMembersError extends Error {
  constructor() {
    super('too many members to list');
  }
}

/** Slack could not tell who is in a conversation right now. */
export class MembershipUnavailableError extends AppError {
  constructor(conversationId: string, cause: unknown) {
    super('membership_unavailable', `Slack could not list the members of ${conversationId}`, {
      cause,
    });
  }
}

/** Conversation membership, and a way to drop what is kept of one conversation's members. */
export interface CachedMembership extends ConversationMembership {
  /**
   * Forgets the member list kept for `conversationId`, so the next question asks Slack again:
   * called when Slack says someone (the app too) joined or left it.
   */
  forget(conversationId: string): void;
}

/**
 * Conversation members through conversations.members (scopes channels:read, groups:read,
 * im:read, mpim:read; Tier 4), each conversation's list kept for MEMBERS_TTL_MS, and one call at a
 * time per conversation however many people ask at once.
 */
export function createConversationMembership(
  client: WebClient,
  now: () => number = Date.now,
): CachedMembership {
  const lists = new BoundedMap<{ at: number; ttl: number; members: Promise<Set<string>> }>(
    MAX_CONVERSATIONS,
  );

  async function fetchMembers(conversationId: string): Promise<Set<string>> {
    const members = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      try {
        const answer = await client.conversations.members({
          channel: conversationId,
          limit: PAGE_SIZE,
          ...(cursor ? { cursor } : {}),
        });
        for (const id of answer.members ?? []) members.add(id);
        cursor = answer.response_metadata?.next_cursor || undefined;
      } catch (error) {
        const code = (error as { data?: { error?: string } }).data?.error;
        if (code && NO_MEMBERS.has(code)) return new Set();
        throw new MembershipUnavailableError(conversationId, error);
      }
      if (!cursor) return members;
    }
    throw new MembershipUnavailableError(conversationId, new TooManyMembersError());
  }

  return {
    forget(conversationId) {
      lists.delete(conversationId);
    },
    async isMember(conversationId, chatId) {
      const hit = lists.get(conversationId);
      if (hit && now() - hit.at < hit.ttl) return (await hit.members).has(chatId);
      const entry = { at: now(), ttl: MEMBERS_TTL_MS, members: fetchMembers(conversationId) };
      lists.set(conversationId, entry);
      // A failure is kept briefly, so questions meanwhile share it instead of asking Slack again;
      // a conversation too big to list is kept as long as a list would be.
      entry.members.catch((error: unknown) => {
        const tooMany = (error as Error).cause instanceof TooManyMembersError;
        entry.ttl = tooMany ? MEMBERS_TTL_MS : FAILURE_TTL_MS;
        entry.at = now();
      });
      return (await entry.members).has(chatId);
    },
  };
}
