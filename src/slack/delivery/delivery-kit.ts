import type { WebClient } from '@slack/web-api';
import type { ConversationMembership } from '../../approvals/access-policy.ts';
import type { AttemptClock, Posted } from '../../approvals/announcer.ts';
import type { EarlierReminder } from '../../approvals/reminder-digest.ts';
import type { ChainOfStep, ChainStep } from '../../approvals/steps.ts';
import {
  type Announcement,
  replyThread,
  type TrackedApproval,
} from '../../approvals/tracked-approval.ts';
import { type WorkingHours, workingWait, zoneOrDefault } from '../../approvals/working-hours.ts';
import { buildRequesterDm } from '../blocks/announcement-messages.ts';
import type { SlackMessage } from '../blocks/request-message.ts';
import { type Language, type Messages, messagesFor, messagesIn } from '../i18n.ts';
import type { Identities } from '../people/identities.ts';
import type { SlackPeople } from '../people/slack-people.ts';
import type { HomePublisher } from './home-publisher.ts';
import { createPoster, type Poster } from './poster.ts';
import { createReaders, type Readers } from './readers.ts';
import { classOf } from './slack-call.ts';

export interface SlackAnnouncerOptions {
  /**
   * The background client: it must not retry by itself (a retried post after a timeout or a 5xx
   * may post twice) and must throw on 429 rather than wait, so the dispatcher paces the lane.
   */
  client: WebClient;
  people: SlackPeople;
  identities: Identities;
  /** Republished for requester and approver after their approval changed. */
  home?: HomePublisher;
  webUrl?: string;
  /** The approver's list of approvals on the service's web UI (approval-service/web-links.ts). */
  webListUrl?: string;
  /** The language of posts in channels and their threads; DMs speak their reader's locale. */
  channelLanguage: Language;
  giveUpAfterDays: number;
  /**
   * Where the approver's DM of an approval went, to edit it once decided: the DM of its approver
   * of `term` (each approver the service hands it to gets their own, handover.ts).
   */
  sentDm?: (djbh: string, term: number) => Promise<Posted | undefined>;
  /**
   * Where an announcement was posted, by id; undefined when it was not, or posted nothing. A note
   * that says something went out (the escalation) asks first; without it the note says nothing.
   */
  sentPost?: (announcementId: string) => Promise<Posted | undefined>;
  /**
   * Who is in a conversation, for the audience check of a post to a conversation other than the
   * approval's own (none is made today); without it such a post is never made.
   */
  membership?: ConversationMembership;
  /** The chain whose step an approval is (steps.ts), for the thread's notes about its steps. */
  chainOf?: (
    djbh: string,
  ) => Promise<
    { chain?: Pick<ChainOfStep, 'id' | 'outcome' | 'endedAt'>; steps: ChainStep[] } | undefined
  >;
  /** Told of what the outbox decided to let pass (an edit with nothing left to edit). */
  logger?: { info(obj: object, msg: string): void };
  /**
   * False when the app may not read history (the history scopes were not granted): a post whose
   * outcome is unknown is then posted again instead of looked for (see granted-scopes.ts).
   */
  searchesForEarlierPosts?: boolean;
  /**
   * The approvers' working hours: how long someone has waited is said in working time, in the
   * approver's own time zone (a Friday-evening request has not waited 3 days on Monday).
   */
  workingHours?: WorkingHours;
  /**
   * One reminder a day per approver (reminder-digest.ts): the approvals waiting for them and the
   * last reminder DM posted to them. Without it each reminder is its own DM. The same for a
   * leader's escalations (`lastEscalationPost`): without it each escalation is its own DM.
   */
  digest?: {
    waitingFor(
      login: string,
      limit: number,
    ): Promise<{ approvals: TrackedApproval[]; total: number }>;
    lastReminderPost(approverLogin: string): Promise<EarlierReminder | undefined>;
    lastEscalationPost?(leaderLogin: string): Promise<EarlierReminder | undefined>;
    /** Whether another escalation to the leader may have been posted unbeknown (the store says). */
    escalationMayBePosted?(leaderLogin: string, a: { id: string }): Promise<boolean>;
    /** The same for another reminder to the approver (the day's digest, maybe). */
    reminderMayBePosted?(approverLogin: string, a: { id: string }): Promise<boolean>;
  };
}

/** A message in whichever language its destination reads. */
export type Compose = (t: Messages) => SlackMessage;

/** What every announcement's handler (handlers/) is given: the options, the poster, the readers. */
export interface DeliveryKit {
  options: SlackAnnouncerOptions;
  poster: Poster;
  readers: Readers;
  /** Many read a channel: the workspace's language. One person reads a DM: their own. */
  languageAt(channel: string, approval: TrackedApproval): Messages;
  /**
   * A reply in the request's thread. When there is no thread (the request message could not be
   * posted) or the app can no longer post there (removed from the channel, channel archived), the
   * requester gets it in their DM with the app instead, so no decision is lost.
   */
  replyOrDm(
    attempt: AttemptClock,
    approval: TrackedApproval,
    compose: Compose,
    a: Announcement,
  ): Promise<Posted>;
  /** How long the approval had waited when `a` was recorded, in working time when hours are set. */
  waitedMs(
    a: Announcement,
    approval: TrackedApproval,
    timeZone: string | undefined,
  ): number | undefined;
}

// Slack's DM conversation ids start with D; a user id as channel is a DM too.
const isDirect = (channel: string) => /^[DUW]/.test(channel);

export function createDeliveryKit(options: SlackAnnouncerOptions): DeliveryKit {
  const poster = createPoster(options);
  const readers = createReaders(options);
  const languageAt = (channel: string, approval: TrackedApproval): Messages =>
    isDirect(channel) ? messagesFor(approval.request.locale) : messagesIn(options.channelLanguage);

  /** Tells the requester in their DM, prefixed with which request it is about. */
  async function toRequesterDm(
    attempt: AttemptClock,
    approval: TrackedApproval,
    compose: Compose,
    a: Announcement,
  ): Promise<Posted> {
    const t = messagesFor(approval.request.locale);
    const requester = await readers.requesterOf(attempt, approval);
    return poster.post(attempt, approval, requester, buildRequesterDm(approval, t, compose(t)), a);
  }

  return {
    options,
    poster,
    readers,
    languageAt,
    async replyOrDm(attempt, approval, compose, a) {
      const thread = replyThread(approval);
      if (!thread) return toRequesterDm(attempt, approval, compose, a);
      const message = compose(languageAt(approval.slack.channelId, approval));
      try {
        return await poster.post(attempt, approval, approval.slack.channelId, message, a, thread);
      } catch (error) {
        if (classOf(error) !== 'fallback') throw error;
        return toRequesterDm(attempt, approval, compose, a);
      }
    },
    waitedMs(a, approval, timeZone) {
      const hours = options.workingHours;
      if (!hours) return undefined;
      return workingWait(
        approval.request.createdAt,
        a.createdAt,
        zoneOrDefault(timeZone, hours),
        hours,
      );
    },
  };
}
