import type { WebClient } from '@slack/web-api';
import { AnnounceError, type Announcer, type Posted } from '../approvals/announcer.ts';
import type { Announcement, TrackedApproval } from '../approvals/tracked-approval.ts';
import {
  buildApproverDm,
  buildDecisionReply,
  buildRequestMessage,
  buildTextReply,
  escapeMrkdwn,
  personRef,
  type SlackMessage,
} from './blocks/request-message.ts';
import type { HomePublisher } from './home-publisher.ts';
import { messagesFor } from './i18n.ts';
import type { Identities } from './identities.ts';
import { ANNOUNCEMENT_EVENT } from './ids.ts';
import type { SlackPeople } from './slack-people.ts';

export interface SlackAnnouncerOptions {
  client: WebClient;
  people: SlackPeople;
  identities: Identities;
  /** Republished for requester and approver after their approval changed. */
  home?: HomePublisher;
  webUrl?: string;
  giveUpAfterDays: number;
}

// Where the request cannot go to the channel, it goes to the requester's DM with the app.
const FALL_BACK_TO_DM = new Set([
  'not_in_channel',
  'channel_not_found',
  'is_archived',
  'restricted_action',
  'cannot_post_in_channel',
]);
const RETRYABLE = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);
// Delivered by posting nothing: a reminder for an approver who is not on Slack.
const NOTHING_POSTED: Posted = { channel: '', ts: '' };
// How far back a recovery looks for a post of an interrupted attempt.
const RECOVERY_WINDOW_S = 15 * 60;

/** Posts announcements to Slack, each tagged with its id in message metadata. */
export function createSlackAnnouncer(options: SlackAnnouncerOptions): Announcer {
  const { client, people } = options;

  async function post(
    channel: string,
    message: SlackMessage,
    a: Announcement,
    threadTs?: string,
  ): Promise<Posted> {
    const result = await client.chat.postMessage({
      channel,
      text: message.text,
      blocks: message.blocks,
      ...(threadTs ? { thread_ts: threadTs } : {}),
      unfurl_links: false,
      metadata: {
        event_type: ANNOUNCEMENT_EVENT,
        event_payload: { announcement_id: a.id, djbh: a.djbh },
      },
    });
    return { channel: result.channel ?? channel, ts: result.ts ?? '' };
  }

  async function dmChannel(userId: string): Promise<string> {
    const opened = await client.conversations.open({ users: userId });
    return opened.channel?.id ?? userId;
  }

  async function permalink(channel: string, ts: string): Promise<string | undefined> {
    try {
      return (await client.chat.getPermalink({ channel, message_ts: ts })).permalink;
    } catch {
      return undefined;
    }
  }

  /**
   * A reply in the request's thread; when the app can no longer post there (removed from the
   * channel, channel archived), the requester gets it in their DM with the app instead, so no
   * decision is lost.
   */
  async function replyOrDm(
    approval: TrackedApproval,
    message: SlackMessage,
    a: Announcement,
  ): Promise<Posted> {
    try {
      return await post(approval.channelId, message, a, approval.messageTs ?? undefined);
    } catch (error) {
      if (!FALL_BACK_TO_DM.has(platformError(error) ?? '')) throw error;
      const t = messagesFor(approval.locale);
      const about = buildTextReply(t.aboutApproval(escapeMrkdwn(approval.title), approval.djbh));
      return post(
        approval.requesterSlackId,
        { text: `${about.text} ${message.text}`, blocks: [...about.blocks, ...message.blocks] },
        a,
      );
    }
  }

  async function deliver(a: Announcement, approval: TrackedApproval): Promise<Posted> {
    const t = messagesFor(approval.locale);
    const thread = approval.messageTs ?? undefined;
    switch (a.kind) {
      case 'request': {
        const message = buildRequestMessage(approval, t, options.webUrl);
        try {
          return await post(approval.channelId, message, a);
        } catch (error) {
          if (!FALL_BACK_TO_DM.has(platformError(error) ?? '')) throw error;
          return post(approval.requesterSlackId, message, a);
        }
      }
      case 'approver-dm':
      case 'reminder': {
        // Typed in as a login: they may still be on Slack under that e-mail.
        const approverId =
          approval.approverSlackId ??
          (await options.identities.slackUserOf(approval.approverLogin));
        if (!approverId) {
          // A reminder has no one to go to; the thread note says what happened.
          if (a.kind === 'reminder') return NOTHING_POSTED;
          return post(
            approval.channelId,
            buildTextReply(t.approverNotOnSlack(approval.approverLogin)),
            a,
            thread,
          );
        }
        const approver = await people.get(approverId);
        const link = thread ? await permalink(approval.channelId, thread) : undefined;
        const links = {
          ...(link ? { thread: link } : {}),
          ...(options.webUrl ? { webUrl: options.webUrl } : {}),
        };
        const at = messagesFor(approver.locale);
        const dm =
          a.kind === 'reminder'
            ? buildApproverDm(
                approval,
                at,
                links,
                at.reminderDm(
                  personRef(approval.requesterSlackId, approval.requesterLogin),
                  daysBetween(approval.createdAt, a.createdAt),
                ),
              )
            : buildApproverDm(approval, at, links);
        return post(approverId, dm, a);
      }
      case 'reminder-note': {
        const approver = personRef(approval.approverSlackId, approval.approverLogin);
        return post(
          approval.channelId,
          buildTextReply(t.reminderNote(approver, a.occurrence ?? 1)),
          a,
          thread,
        );
      }
      case 'decision': {
        const by = personRef(
          approval.approverSlackId,
          approval.decidedBy ?? approval.approverLogin,
        );
        return replyOrDm(approval, buildDecisionReply(a.decision ?? approval.decision, by, t), a);
      }
      case 'gave-up':
        return replyOrDm(approval, buildTextReply(t.gaveUp(options.giveUpAfterDays)), a);
      case 'parent-update': {
        // Editing is idempotent: it always shows the latest state, whichever decision queued it.
        const message = buildRequestMessage(approval, t, options.webUrl);
        await client.chat.update({
          channel: approval.channelId,
          ts: thread ?? '',
          text: message.text,
          blocks: message.blocks,
        });
        return { channel: approval.channelId, ts: thread ?? '' };
      }
    }
  }

  async function findIn(
    channel: string,
    a: Announcement,
    threadTs?: string,
  ): Promise<Posted | undefined> {
    const oldest = String(Math.floor((a.attemptedAt?.getTime() ?? 0) / 1000) - RECOVERY_WINDOW_S);
    const page = threadTs
      ? await client.conversations.replies({
          channel,
          ts: threadTs,
          include_all_metadata: true,
          limit: 200,
          oldest,
        })
      : await client.conversations.history({
          channel,
          include_all_metadata: true,
          limit: 200,
          oldest,
        });
    const found = page.messages?.find((m) => {
      const metadata = m.metadata as
        | { event_type?: string; event_payload?: { announcement_id?: string } }
        | undefined;
      return (
        metadata?.event_type === ANNOUNCEMENT_EVENT &&
        metadata.event_payload?.announcement_id === a.id
      );
    });
    return found?.ts ? { channel, ts: found.ts } : undefined;
  }

  async function findDelivered(
    a: Announcement,
    approval: TrackedApproval,
  ): Promise<Posted | undefined> {
    const thread = approval.messageTs ?? undefined;
    const places: Array<{ channel: () => Promise<string>; thread?: string }> = [];
    switch (a.kind) {
      case 'request':
        places.push(
          { channel: async () => approval.channelId },
          { channel: () => dmChannel(approval.requesterSlackId) },
        );
        break;
      case 'approver-dm':
      case 'reminder': {
        const approverId =
          approval.approverSlackId ??
          (await options.identities.slackUserOf(approval.approverLogin));
        if (approverId) places.push({ channel: () => dmChannel(approverId) });
        else
          places.push({ channel: async () => approval.channelId, ...(thread ? { thread } : {}) });
        break;
      }
      case 'reminder-note':
        places.push({ channel: async () => approval.channelId, ...(thread ? { thread } : {}) });
        break;
      case 'decision':
      case 'gave-up':
        places.push(
          { channel: async () => approval.channelId, ...(thread ? { thread } : {}) },
          { channel: () => dmChannel(approval.requesterSlackId) },
        );
        break;
      case 'parent-update':
        return undefined;
    }
    for (const place of places) {
      try {
        const found = await findIn(await place.channel(), a, place.thread);
        if (found) return found;
      } catch (error) {
        // A place we cannot read holds no post of ours; anything else must not be taken for "not posted".
        if (!FALL_BACK_TO_DM.has(platformError(error) ?? '')) throw asAnnounceError(error);
      }
    }
    return undefined;
  }

  return {
    async deliver(a, approval) {
      let posted: Posted;
      try {
        posted = await deliver(a, approval);
      } catch (error) {
        throw asAnnounceError(error);
      }
      // What people see on their Home tab changed with a new request or a decision.
      if (a.kind === 'request' || a.kind === 'parent-update' || a.kind === 'gave-up') {
        await options.home?.refresh([approval.requesterSlackId, approval.approverSlackId]);
      }
      return posted;
    },
    findDelivered,
  };
}

function platformError(error: unknown): string | undefined {
  return (error as { data?: { error?: string } }).data?.error;
}

function asAnnounceError(error: unknown): AnnounceError {
  if (error instanceof AnnounceError) return error;
  const code = (error as { code?: string }).code;
  const platform = platformError(error);
  const retryable =
    code === 'slack_webapi_rate_limited_error' ||
    code === 'slack_webapi_request_error' ||
    code === 'slack_webapi_http_error' ||
    (platform !== undefined && RETRYABLE.has(platform));
  return new AnnounceError(
    `Slack: ${platform ?? code ?? (error instanceof Error ? error.message : 'unknown error')}`,
    retryable,
    {
      cause: error,
    },
  );
}

/** Whole days from `from` to `to`, at least 1. */
function daysBetween(from: Date, to: Date): number {
  return Math.max(1, Math.floor((to.getTime() - from.getTime()) / 86_400_000));
}
