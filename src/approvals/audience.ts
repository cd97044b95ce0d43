import {
  type ApprovalParties,
  type Asker,
  type ConversationMembership,
  channelParties,
  decide,
  partiesOf,
  type Verdict,
} from './access-policy.ts';
import { type AnnouncementKind, ruleOf } from './announcement-rules.ts';
import type { Person } from './person.ts';
import type { TrackedApproval } from './tracked-approval.ts';

/**
 * Who can read where a message goes, checked against who may see the approval it is about
 * (WHO_MAY['see'] in access-policy.ts, the one place that says so). The access policy guards what
 * people ask to see; this guards what the app sends on its own (DMs, escalations, re-posts,
 * reminders, notes). Both read the same WHO_MAY, so a leader told of an approval by DM is also
 * someone `/approve status` shows it to, and nobody reads a title or a note the policy hides.
 */

/** Where a message goes, as far as who reads it: a conversation's members, or one person. */
export type Destination =
  | { kind: 'conversation'; id: string }
  | {
      kind: 'dm';
      person: Person;
      /** Their login, looked up only when the policy needs it (the person's login is unknown). */
      lookUpLogin?: () => Promise<string | null>;
    };

/**
 * What a message shows of its approval: its title and note, or neither (a decision's reply says
 * who decided, a note says who was reminded: nothing a reader of the thread has not already seen).
 */
export type Carries = 'title-and-note' | 'nothing';

/** What an announcement of `kind` carries, as its rule declares (announcement-rules.ts). */
export function carriedBy(kind: AnnouncementKind): Carries {
  return ruleOf(kind).carries;
}

/** A person as the access policy's asker: their login is already known, no lookup needed. */
export function askerOf(person: Person, lookUpLogin?: () => Promise<string | null>): Asker {
  return {
    chatId: person.chatId ?? '',
    login: async () => person.login ?? (lookUpLogin ? lookUpLogin() : null),
  };
}

/** What mayReach reads of an approval: its people (by login, partiesOf), where it was asked. */
export function audienceOf(approval: TrackedApproval): {
  parties: ApprovalParties;
  conversation: string;
  requester: Asker;
} {
  return {
    parties: partiesOf(approval),
    conversation: approval.slack.channelId,
    // Asked about only for a conversation other than the approval's own (is the requester a
    // member there now?), which no announcement posts to today.
    requester: askerOf({
      chatId: approval.parties.requester.slackId,
      login: approval.parties.requester.login,
    }),
  };
}

/**
 * Whether a message carrying `carries` of the approval of `parties` may go to `to`:
 * - one that carries neither title nor note may go anywhere;
 * - a DM, when its one reader may see the approval (WHO_MAY['see']: its requester, its approver,
 *   the leader it was escalated to, a member of where it was posted);
 * - a conversation, when it is the approval's own (`conversation`: where it was asked and posted;
 *   its members are who WHO_MAY['see'] names), or one its requester may post requests in now
 *   (WHO_MAY['post-request-in']: a member of it).
 * `unsure` when it could not be checked now (the chat could not list the conversation): not sent,
 * tried again. Never throws.
 */
export function mayReach(
  to: Destination,
  carries: Carries,
  approval: { parties: ApprovalParties; conversation: string; requester: Asker },
  membership: ConversationMembership,
): Promise<Verdict> {
  if (carries === 'nothing') return Promise.resolve('allowed');
  if (to.kind === 'dm')
    return decide('see', approval.parties, askerOf(to.person, to.lookUpLogin), membership);
  if (to.id === approval.conversation || to.id === approval.parties.postedIn)
    return Promise.resolve('allowed');
  return mayPostRequestIn(to.id, approval.requester, membership);
}

/**
 * Whether `requester` may have a request posted in a conversation (its members would read it):
 * as a member of it now (WHO_MAY['post-request-in']). Where a request goes is checked here when it
 * is chosen from anything but the place the person asks from (Request again's old channel).
 */
export function mayPostRequestIn(
  conversationId: string,
  requester: Asker,
  membership: ConversationMembership,
): Promise<Verdict> {
  return decide('post-request-in', channelParties(conversationId), requester, membership);
}
