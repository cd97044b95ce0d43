import type { AnnouncementRule, LaneType } from './announcement-rules.ts';
import { loginKey, type Person } from './person.ts';
import type { Approver, FollowUp, Parties, SlackAddress } from './tracked-approval.ts';

/**
 * Where a message goes: one conversation of the chat. The chat paces posting per conversation,
 * whatever the reason a message goes there, so a conversation is also one lane of the outbox
 * (`laneOf`): one attempt at a time, spaced at the chat's pace.
 */
export type Conversation =
  | { kind: 'channel'; id: string }
  | { kind: 'thread'; channelId: string; ts: string }
  | { kind: 'dm'; person: Person };

/** What of an approval decides where its announcements go. */
export interface LaneSubject {
  djbh: string;
  slack: Pick<SlackAddress, 'channelId' | 'messageTs'>;
  parties: Pick<Parties, 'requester'> & { approver: Pick<Approver, 'login' | 'slackId'> };
  followUp: Pick<FollowUp, 'escalatedTo'>;
}

/**
 * Whether a conversation id names a one-to-one DM (the chat's convention: `D…`). An approval's
 * conversation is only ever a DM when it is the requester's own: asked there (a DM the app cannot
 * post in sends the request to the requester's DM instead, so it ends up there either way), or
 * posted there because the channel refused it.
 */
export const isDirectConversation = (id: string): boolean => id.startsWith('D');

/** The conversation a message to the approval's channel goes to: the channel, or the requester's DM. */
function requestConversation(approval: LaneSubject): Conversation {
  return isDirectConversation(approval.slack.channelId)
    ? { kind: 'dm', person: requesterOf(approval) }
    : { kind: 'channel', id: approval.slack.channelId };
}

const requesterOf = (a: LaneSubject): Person => ({
  chatId: a.parties.requester.slackId,
  login: a.parties.requester.login,
});

/**
 * Where an announcement of this lane type goes for `approval` as it is now; undefined for a lane
 * that is no conversation (`own`: a call that posts nothing anyone reads).
 */
export function conversationOf(lane: LaneType, approval: LaneSubject): Conversation | undefined {
  switch (lane) {
    case 'channel':
    case 'request-message':
      return requestConversation(approval);
    case 'thread': {
      // No request message (not posted yet, or never): the requester's DM is where it goes.
      if (!approval.slack.messageTs) return { kind: 'dm', person: requesterOf(approval) };
      const inChannel = requestConversation(approval);
      return inChannel.kind === 'channel'
        ? { kind: 'thread', channelId: inChannel.id, ts: approval.slack.messageTs }
        : inChannel;
    }
    case 'approver-dm':
      return {
        kind: 'dm',
        person: {
          chatId: approval.parties.approver.slackId,
          login: approval.parties.approver.login,
        },
      };
    case 'leader-dm':
      return approval.followUp.escalatedTo
        ? { kind: 'dm', person: approval.followUp.escalatedTo }
        : undefined;
    case 'own':
      return undefined;
  }
}

/**
 * A conversation's lane: `post:<channel>` for a channel and its threads (the chat paces the
 * channel, threads included), `dm:login:<login>` for a DM with a person (logins compared without
 * case, as the service does), or `dm:<chat id>` for someone whose login is not known. A person is
 * their login: their chat account is found when the message goes (person.ts, Identities), so the
 * lane is one whether the approval knew their account as it started or not, and stays one when a
 * link moves them to another account.
 */
export function conversationLane(conversation: Conversation): string {
  switch (conversation.kind) {
    case 'channel':
      return `post:${conversation.id}`;
    case 'thread':
      return `post:${conversation.channelId}`;
    case 'dm': {
      const { chatId, login } = conversation.person;
      return login ? `dm:login:${loginKey(login)}` : `dm:${chatId ?? ''}`;
    }
  }
}

/**
 * The lane of an announcement with this rule, for `approval`: the conversation it goes to, so a
 * request asked in a DM, replies that fall back to the requester's DM, and approver and leader
 * DMs to one person all share one lane and one pace. Edits of the request message are paced on
 * their own per conversation (`edit:<lane>`); a lane that is no conversation is the approval's
 * own (`own:<number>`). Computed when the announcement is recorded and kept with it; computed
 * again only when the approval's conversation changes (its request message was posted).
 */
export function laneOf(rule: Pick<AnnouncementRule, 'lane'>, approval: LaneSubject): string {
  const conversation = conversationOf(rule.lane, approval);
  if (!conversation) return `own:${approval.djbh}`;
  const lane = conversationLane(conversation);
  return rule.lane === 'request-message' ? `edit:${lane}` : lane;
}
