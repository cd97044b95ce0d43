import type { WebClient } from '@slack/web-api';
import { type LaneType, ruleOf } from '../../approvals/announcement-rules.ts';
import type { Announcer, AttemptClock, Posted } from '../../approvals/announcer.ts';
import {
  type Announcement,
  replyThread,
  type TrackedApproval,
} from '../../approvals/tracked-approval.ts';
import { ANNOUNCEMENT_EVENT } from '../ids.ts';
import { asAnnounceError, call, classOf } from './slack-call.ts';

/*
 * The search for an earlier post: before an attempt whose predecessor may have posted tries
 * again, it looks for a message carrying the announcement's id (in its metadata) wherever the
 * announcement's rule may have put it.
 */

// A recovery looks for an earlier post from a little before the announcement was recorded
// (clocks differ) up to now, page by page, at most this many pages.
const RECOVERY_SLACK_S = 15 * 60;
const RECOVERY_MAX_PAGES = 50;

export interface RecoverySearchDeps {
  /** The outbox's client (see SlackAnnouncerOptions.client). */
  client: WebClient;
  /**
   * The Slack user of a login of the approval (its approver's unless named) now, through the
   * identities (the announcer's): where a post to that person went, unless a link moved them since.
   */
  slackUserOf(
    attempt: AttemptClock,
    approval: TrackedApproval,
    login?: string,
  ): Promise<string | null>;
}

/** Where an earlier post may be: a channel (opened when asked for), or a thread in it. */
interface Place {
  channel: () => Promise<string | undefined>;
  thread?: string;
}

/** The announcer's findDelivered: the announcement's post, or undefined when none was found. */
export function createRecoverySearch(deps: RecoverySearchDeps): Announcer['findDelivered'] {
  /**
   * Looks for this announcement's post wherever its rule may have put it: its own place first,
   * then its fallback's. Edits and completions (repeatable) are never looked for.
   */
  return async function findDelivered(a, approval, attempt) {
    if (ruleOf(a.kind).repeatable) return undefined;
    for (const place of await placesOf(deps, a, approval, attempt)) {
      const found = await lookIn(deps.client, attempt, place, a);
      if (found) return found;
    }
    return undefined;
  };
}

/** This announcement's post in one place, if it is there. */
async function lookIn(
  client: WebClient,
  attempt: AttemptClock,
  place: Place,
  a: Announcement,
): Promise<Posted | undefined> {
  try {
    const channel = await place.channel();
    return channel ? await findIn(client, attempt, channel, a, place.thread) : undefined;
  } catch (error) {
    // A place we cannot read (or open) holds no post of ours we could find; anything else must
    // not be taken for "not posted".
    if (classOf(error) !== 'fallback') throw asAnnounceError(error);
    return undefined;
  }
}

/** Where an announcement of this kind may have been posted, in the order to look. */
async function placesOf(
  deps: RecoverySearchDeps,
  a: Announcement,
  approval: TrackedApproval,
  attempt: AttemptClock,
): Promise<Place[]> {
  const rule = ruleOf(a.kind);
  const thread = replyThread(approval) ?? undefined;
  const inThread: Place = {
    channel: async () => approval.slack.channelId,
    ...(thread ? { thread } : {}),
  };
  const own = await ownPlace(deps, rule.lane, approval, attempt);
  const places: Place[] = own ? [own] : [];
  // Where the fallback would have put it: the requester's DM, or (to tell the requester) the
  // thread and the requester's DM.
  if (rule.fallback === 'tell-requester' && thread) places.push(inThread);
  if (rule.fallback !== 'nothing' || (rule.lane === 'thread' && !thread))
    places.push(dmPlace(deps, approval, attempt, approval.parties.requester.login));
  return places;
}

/** Where the announcement's own lane posts, as far as a search can look. */
async function ownPlace(
  deps: RecoverySearchDeps,
  lane: LaneType,
  approval: TrackedApproval,
  attempt: AttemptClock,
): Promise<Place | undefined> {
  const thread = replyThread(approval) ?? undefined;
  switch (lane) {
    case 'channel':
      return {
        channel: async () => approval.slack.channelId,
        ...(approval.slack.threadTs ? { thread: approval.slack.threadTs } : {}),
      };
    case 'thread':
      return thread ? { channel: async () => approval.slack.channelId, thread } : undefined;
    case 'approver-dm': {
      // Looked up now: an approver not on Slack has no DM to look in.
      const approverId = await deps.slackUserOf(attempt, approval);
      return approverId
        ? { channel: () => dmChannel(deps.client, attempt, approverId) }
        : undefined;
    }
    case 'leader-dm': {
      const leader = approval.followUp.escalatedTo;
      return leader ? dmPlace(deps, approval, attempt, leader.login) : undefined;
    }
    case 'request-message':
    case 'own':
      return undefined;
  }
}

/** The DM with whoever has `login` now (the approval's requester unless named). */
function dmPlace(
  deps: RecoverySearchDeps,
  approval: TrackedApproval,
  attempt: AttemptClock,
  login: string,
): Place {
  return {
    channel: async () =>
      dmChannel(deps.client, attempt, await deps.slackUserOf(attempt, approval, login)),
  };
}

async function dmChannel(
  client: WebClient,
  attempt: AttemptClock,
  userId: string | null,
): Promise<string | undefined> {
  // Not on Slack now: there is no DM with them to look in.
  if (!userId) return undefined;
  attempt.check();
  const opened = await call('conversations.open', () =>
    client.conversations.open({ users: userId }),
  );
  return opened.channel?.id ?? userId;
}

type Page = {
  messages?: Array<{ ts?: string; metadata?: unknown }>;
  has_more?: boolean;
  response_metadata?: { next_cursor?: string };
};

/** Our post carrying this announcement's id, in a channel or thread, from `oldest` on. */
async function findIn(
  client: WebClient,
  attempt: AttemptClock,
  channel: string,
  a: Announcement,
  threadTs?: string,
): Promise<Posted | undefined> {
  // From the first attempt (kept through re-drives), less the clocks' disagreement.
  const from = a.firstAttemptedAt ?? a.createdAt;
  const oldest = String(Math.floor(from.getTime() / 1000) - RECOVERY_SLACK_S);
  let cursor: string | undefined;
  for (let page = 0; page < RECOVERY_MAX_PAGES; page++) {
    attempt.check();
    const common = {
      channel,
      include_all_metadata: true,
      limit: 200,
      oldest,
      ...(cursor ? { cursor } : {}),
    };
    const result: Page = threadTs
      ? await call('conversations.replies', () =>
          client.conversations.replies({ ...common, ts: threadTs }),
        )
      : await call('conversations.history', () => client.conversations.history(common));
    const found = result.messages?.find((m) => carriesId(m.metadata, a.id));
    if (found?.ts) return { channel, ts: found.ts };
    cursor = result.response_metadata?.next_cursor || undefined;
    if (!result.has_more || !cursor) return undefined;
  }
  return undefined;
}

/** Whether a message's metadata names this announcement (the poster tags every post so). */
function carriesId(metadata: unknown, id: string): boolean {
  const m = metadata as
    | { event_type?: string; event_payload?: { announcement_id?: string } }
    | undefined;
  return m?.event_type === ANNOUNCEMENT_EVENT && m.event_payload?.announcement_id === id;
}
