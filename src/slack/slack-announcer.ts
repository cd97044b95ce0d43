import type { WebClient } from '@slack/web-api';
import {
  AnnounceError,
  type Announcer,
  type AttemptClock,
  NOTHING_POSTED,
  type Posted,
} from '../approvals/announcer.ts';
import { stepOutcome } from '../approvals/step-outcome.ts';
import {
  type Announcement,
  replyThread,
  type TrackedApproval,
} from '../approvals/tracked-approval.ts';
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
import { type Language, type Messages, messagesFor, messagesIn } from './i18n.ts';
import { type Identities, recordedSlackUser } from './identities.ts';
import { ANNOUNCEMENT_EVENT } from './ids.ts';
import type { SlackPeople } from './slack-people.ts';

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
  /** The language of posts in channels and their threads; DMs speak their reader's locale. */
  channelLanguage: Language;
  giveUpAfterDays: number;
  /** Where the approver's DM of an approval went, to edit it once decided. */
  sentDm?: (djbh: string) => Promise<Posted | undefined>;
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
// Slack answered, but may have taken the post before failing.
const MAYBE_POSTED = new Set(['internal_error', 'fatal_error', 'request_timeout']);
// A recovery looks for an earlier post from a little before the announcement was recorded
// (clocks differ) up to now, page by page, at most this many pages.
const RECOVERY_SLACK_S = 15 * 60;
const RECOVERY_MAX_PAGES = 50;

/** A message in whichever language its destination reads. */
type Compose = (t: Messages) => SlackMessage;

// Slack's DM conversation ids start with D; a user id as channel is a DM too.
const isDirect = (channel: string) => /^[DUW]/.test(channel);

/** Posts announcements to Slack, each tagged with its id in message metadata. */
export function createSlackAnnouncer(options: SlackAnnouncerOptions): Announcer {
  const { client, people } = options;

  /** Many read a channel: the workspace's language. One person reads a DM: their own. */
  const languageAt = (channel: string, approval: TrackedApproval): Messages =>
    isDirect(channel) ? messagesFor(approval.locale) : messagesIn(options.channelLanguage);

  async function post(
    attempt: AttemptClock,
    channel: string,
    message: SlackMessage,
    a: Announcement,
    threadTs?: string,
  ): Promise<Posted> {
    attempt.check();
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

  async function dmChannel(attempt: AttemptClock, userId: string): Promise<string> {
    attempt.check();
    const opened = await client.conversations.open({ users: userId });
    return opened.channel?.id ?? userId;
  }

  async function permalink(
    attempt: AttemptClock,
    channel: string,
    ts: string,
  ): Promise<string | undefined> {
    attempt.check();
    try {
      return (await client.chat.getPermalink({ channel, message_ts: ts })).permalink;
    } catch {
      return undefined;
    }
  }

  /** The Slack user of a service login of this approval (its approver, or who decided). */
  async function slackUserOf(
    attempt: AttemptClock,
    approval: TrackedApproval,
    login = approval.approverLogin,
  ): Promise<string | null> {
    const recorded = recordedSlackUser(approval, login);
    if (recorded) return recorded;
    attempt.check();
    // Typed in as a login: they may still be on Slack under that e-mail.
    return options.identities.slackUserOf(login);
  }

  /** Tells the requester in their DM, prefixed with which request it is about. */
  function toRequesterDm(
    attempt: AttemptClock,
    approval: TrackedApproval,
    compose: Compose,
    a: Announcement,
  ): Promise<Posted> {
    const t = messagesFor(approval.locale);
    const message = compose(t);
    const about = buildTextReply(t.aboutApproval(escapeMrkdwn(approval.title), approval.djbh));
    return post(
      attempt,
      approval.requesterSlackId,
      { text: `${about.text} ${message.text}`, blocks: [...about.blocks, ...message.blocks] },
      a,
    );
  }

  /**
   * A reply in the request's thread. When there is no thread (the request message could not be
   * posted) or the app can no longer post there (removed from the channel, channel archived), the
   * requester gets it in their DM with the app instead, so no decision is lost.
   */
  async function replyOrDm(
    attempt: AttemptClock,
    approval: TrackedApproval,
    compose: Compose,
    a: Announcement,
  ): Promise<Posted> {
    const thread = replyThread(approval);
    if (!thread) return toRequesterDm(attempt, approval, compose, a);
    const message = compose(languageAt(approval.channelId, approval));
    try {
      return await post(attempt, approval.channelId, message, a, thread);
    } catch (error) {
      if (!FALL_BACK_TO_DM.has(platformError(error) ?? '')) throw error;
      return toRequesterDm(attempt, approval, compose, a);
    }
  }

  async function approverDm(
    attempt: AttemptClock,
    a: Announcement,
    approval: TrackedApproval,
  ): Promise<Posted> {
    const thread = approval.messageTs ?? undefined;
    // An edit needs the DM we sent; nothing to edit when none was sent.
    const sent =
      a.kind === 'approver-dm-update' && options.sentDm
        ? await options.sentDm(approval.djbh)
        : undefined;
    if (a.kind === 'approver-dm-update' && !sent) return NOTHING_POSTED;
    const approverId = await slackUserOf(attempt, approval);
    if (!approverId) {
      // A reminder has no one to go to; the thread note says what happened.
      if (a.kind === 'reminder') return NOTHING_POSTED;
      return replyOrDm(
        attempt,
        approval,
        (t) => buildTextReply(t.approverNotOnSlack(escapeMrkdwn(approval.approverLogin))),
        a,
      );
    }
    attempt.check();
    const approver = await people.get(approverId);
    const link = thread ? await permalink(attempt, approval.channelId, thread) : undefined;
    const links = {
      ...(link ? { thread: link } : {}),
      ...(options.webUrl ? { webUrl: options.webUrl } : {}),
    };
    const at = messagesFor(approver.locale);
    const opening =
      a.kind === 'reminder'
        ? at.reminderDm(
            personRef(approval.requesterSlackId, approval.requesterLogin),
            daysBetween(approval.createdAt, a.createdAt),
          )
        : undefined;
    const dm = buildApproverDm(approval, at, links, opening);
    if (!sent) return post(attempt, approverId, dm, a);
    attempt.check();
    await client.chat.update({
      channel: sent.channel,
      ts: sent.ts,
      text: dm.text,
      blocks: dm.blocks,
    });
    return sent;
  }

  async function deliver(
    a: Announcement,
    approval: TrackedApproval,
    attempt: AttemptClock,
  ): Promise<Posted> {
    const thread = replyThread(approval) ?? undefined;
    const requester = personRef(approval.requesterSlackId, approval.requesterLogin);
    const request: Compose = (t) => buildRequestMessage(approval, t, options.webUrl);
    switch (a.kind) {
      case 'request': {
        const channel = approval.channelId;
        const asked = approval.threadTs ?? undefined;
        try {
          return await post(attempt, channel, request(languageAt(channel, approval)), a, asked);
        } catch (error) {
          if (!FALL_BACK_TO_DM.has(platformError(error) ?? '')) throw error;
          const dm = approval.requesterSlackId;
          return post(attempt, dm, request(languageAt(dm, approval)), a);
        }
      }
      case 'approver-dm':
      case 'reminder':
      case 'approver-dm-update':
        return approverDm(attempt, a, approval);
      case 'reminder-note': {
        const approver = personRef(approval.approverSlackId, approval.approverLogin);
        // Only worth saying in the thread; without one, the requester needs no note.
        if (!thread) return NOTHING_POSTED;
        const t = languageAt(approval.channelId, approval);
        return post(
          attempt,
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
        const decision = a.decision ?? approval.decision;
        return replyOrDm(
          attempt,
          approval,
          (t) => buildDecisionReply(decision, by, requester, t),
          a,
        );
      }
      case 'gave-up':
        return replyOrDm(
          attempt,
          approval,
          (t) => buildTextReply(t.gaveUp(options.giveUpAfterDays)),
          a,
        );
      case 'ended':
        return replyOrDm(attempt, approval, (t) => buildTextReply(t.ended(requester)), a);
      case 'vanished':
        return replyOrDm(
          attempt,
          approval,
          (t) => buildTextReply(t.vanished(requester, approval.djbh)),
          a,
        );
      case 'parent-update': {
        // Editing is idempotent: it always shows the latest state, whichever change queued it.
        const ts = approval.messageTs;
        if (!ts) return NOTHING_POSTED;
        const message = request(languageAt(approval.channelId, approval));
        attempt.check();
        await client.chat.update({
          channel: approval.channelId,
          ts,
          text: message.text,
          blocks: message.blocks,
        });
        return { channel: approval.channelId, ts };
      }
      case 'step-complete':
        return completeStep(attempt, approval);
    }
  }

  /**
   * Ends the Workflow Builder step that started the approval with its outcome. Called with the
   * app's bot token: the step's own token from function_executed lives only while the step's
   * event is handled, and an approval takes days.
   */
  async function completeStep(attempt: AttemptClock, approval: TrackedApproval): Promise<Posted> {
    const id = approval.functionExecutionId;
    if (!id) return NOTHING_POSTED;
    const outcome = stepOutcome(approval);
    attempt.check();
    try {
      if (outcome.ok) {
        const decidedBy = outcome.decidedByLogin
          ? await slackUserOf(attempt, approval, outcome.decidedByLogin).catch(() => null)
          : null;
        // The lookup's catch must not let a call start past the attempt's deadline.
        attempt.check();
        await client.functions.completeSuccess({
          function_execution_id: id,
          outputs: {
            approval_number: outcome.approvalNumber,
            decision: outcome.decision,
            decided_at: outcome.decidedAt,
            ...(decidedBy ? { decided_by: decidedBy } : {}),
          },
        });
      } else {
        const t = messagesIn(options.channelLanguage);
        await client.functions.completeError({
          function_execution_id: id,
          error: t.stepFailed(outcome.reason, approval.djbh, options.giveUpAfterDays),
        });
      }
    } catch (error) {
      // Completed already: an earlier attempt got through although its answer was lost.
      if (platformError(error) === 'execution_not_in_running_state') return NOTHING_POSTED;
      throw error;
    }
    return NOTHING_POSTED;
  }

  /** Our post carrying this announcement's id, in a channel or thread, from `oldest` on. */
  async function findIn(
    attempt: AttemptClock,
    channel: string,
    a: Announcement,
    threadTs?: string,
  ): Promise<Posted | undefined> {
    const oldest = String(Math.floor(a.createdAt.getTime() / 1000) - RECOVERY_SLACK_S);
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
      const result = threadTs
        ? await client.conversations.replies({ ...common, ts: threadTs })
        : await client.conversations.history(common);
      const found = result.messages?.find((m) => {
        const metadata = m.metadata as
          | { event_type?: string; event_payload?: { announcement_id?: string } }
          | undefined;
        return (
          metadata?.event_type === ANNOUNCEMENT_EVENT &&
          metadata.event_payload?.announcement_id === a.id
        );
      });
      if (found?.ts) return { channel, ts: found.ts };
      cursor = result.response_metadata?.next_cursor || undefined;
      if (!result.has_more || !cursor) return undefined;
    }
    return undefined;
  }

  async function findDelivered(
    a: Announcement,
    approval: TrackedApproval,
    attempt: AttemptClock,
  ): Promise<Posted | undefined> {
    const thread = replyThread(approval) ?? undefined;
    const inThread = { channel: async () => approval.channelId, ...(thread ? { thread } : {}) };
    const requesterDm = { channel: () => dmChannel(attempt, approval.requesterSlackId) };
    const places: Array<{ channel: () => Promise<string>; thread?: string }> = [];
    switch (a.kind) {
      case 'request':
        places.push(
          {
            channel: async () => approval.channelId,
            ...(approval.threadTs ? { thread: approval.threadTs } : {}),
          },
          requesterDm,
        );
        break;
      case 'approver-dm':
      case 'reminder': {
        const approverId = await slackUserOf(attempt, approval);
        if (approverId) places.push({ channel: () => dmChannel(attempt, approverId) });
        else places.push(thread ? inThread : requesterDm);
        break;
      }
      case 'reminder-note':
        if (thread) places.push(inThread);
        break;
      case 'decision':
      case 'gave-up':
      case 'ended':
      case 'vanished':
        if (thread) places.push(inThread);
        places.push(requesterDm);
        break;
      // Edits are idempotent: doing one again is harmless. A step completed twice answers
      // execution_not_in_running_state, which counts as done.
      case 'parent-update':
      case 'approver-dm-update':
      case 'step-complete':
        return undefined;
    }
    for (const place of places) {
      try {
        const found = await findIn(attempt, await place.channel(), a, place.thread);
        if (found) return found;
      } catch (error) {
        // A place we cannot read (or have no scope to read, such as a group DM) holds no post of
        // ours; anything else must not be taken for "not posted".
        const code = platformError(error) ?? '';
        if (!FALL_BACK_TO_DM.has(code) && code !== 'missing_scope') throw asAnnounceError(error);
      }
    }
    return undefined;
  }

  return {
    async deliver(a, approval, attempt) {
      try {
        return await deliver(a, approval, attempt);
      } catch (error) {
        throw asAnnounceError(error);
      }
    },
    findDelivered,
    async afterDelivered(a, approval) {
      // What people see on their Home tab changed with a new request or a change of state.
      if (a.kind === 'request' || a.kind === 'parent-update') {
        await options.home?.refresh([approval.requesterSlackId, approval.approverSlackId]);
      }
    },
  };
}

function platformError(error: unknown): string | undefined {
  return (error as { data?: { error?: string } }).data?.error;
}

/**
 * How the dispatcher should take a failed call: a 429 waits for Retry-After; a timeout, a lost
 * connection or a 5xx may have posted (the next attempt looks first); Slack's own retryable errors
 * are tried again; everything else Slack refused for good.
 */
export function asAnnounceError(error: unknown): AnnounceError {
  if (error instanceof AnnounceError) return error;
  const e = error as { code?: string; retryAfter?: number; statusCode?: number };
  const platform = platformError(error);
  const label = `Slack: ${platform ?? e.code ?? (error instanceof Error ? error.message : 'unknown error')}`;
  if (e.code === 'slack_webapi_rate_limited_error')
    return new AnnounceError(label, {
      retryable: true,
      retryAfterMs: Math.max(1, e.retryAfter ?? 1) * 1000,
      cause: error,
    });
  if (e.code === 'slack_webapi_request_error' || e.code === 'slack_webapi_http_error')
    return new AnnounceError(e.statusCode ? `${label} (HTTP ${e.statusCode})` : label, {
      retryable: true,
      uncertain: true,
      cause: error,
    });
  if (platform !== undefined)
    return new AnnounceError(label, {
      retryable: RETRYABLE.has(platform),
      uncertain: MAYBE_POSTED.has(platform),
      cause: error,
    });
  // Not Slack's answer at all (a bug, a failed lookup elsewhere): may pass, may have posted.
  return new AnnounceError(label, { retryable: true, uncertain: true, cause: error });
}

/** Whole days from `from` to `to`, at least 1. */
function daysBetween(from: Date, to: Date): number {
  return Math.max(1, Math.floor((to.getTime() - from.getTime()) / 86_400_000));
}
