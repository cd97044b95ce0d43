import type { WebClient } from '@slack/web-api';
import type { ConversationMembership } from '../../approvals/access-policy.ts';
import { ruleOf } from '../../approvals/announcement-rules.ts';
import {
  AnnounceError,
  type Announcer,
  type AttemptClock,
  NOTHING_POSTED,
  type Posted,
} from '../../approvals/announcer.ts';
import { audienceOf, carriedBy, type Destination, mayReach } from '../../approvals/audience.ts';
import type { Person } from '../../approvals/person.ts';
import {
  DIGEST_LISTED,
  DIGEST_SCAN,
  digestEntries,
  type EarlierReminder,
  reminderDelivery,
} from '../../approvals/reminder-digest.ts';
import { stepOutcome } from '../../approvals/step-outcome.ts';
import {
  type Announcement,
  announcementId,
  replyThread,
  type TrackedApproval,
} from '../../approvals/tracked-approval.ts';
import {
  isKnownTimeZone,
  sameLocalDay,
  type WorkingHours,
  workingWait,
  zoneOrDefault,
} from '../../approvals/working-hours.ts';
import {
  buildApproverAnnouncement,
  buildApproverUnreachableReply,
  buildDecisionAnnouncement,
  buildEndedReply,
  buildEscalationNote,
  buildGaveUpReply,
  buildHandedOverNote,
  buildLeaderDm,
  buildReminderDigest,
  buildReminderNote,
  buildRequesterDm,
  buildVanishedReply,
  type DigestItem,
} from '../blocks/announcement-messages.ts';
import { buildRequestMessage, type SlackMessage } from '../blocks/request-message.ts';
import { type Language, type Messages, messagesFor, messagesIn } from '../i18n.ts';
import { ANNOUNCEMENT_EVENT } from '../ids.ts';
import type { Identities } from '../people/identities.ts';
import type { SlackPeople } from '../people/slack-people.ts';
import type { HomePublisher } from './home-publisher.ts';
import { createRecoverySearch } from './recovery-search.ts';
import { asAnnounceError, call, classOf, type SlackCallError } from './slack-call.ts';

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
   * last reminder DM posted to them. Without it each reminder is its own DM.
   */
  digest?: {
    waitingFor(
      login: string,
      limit: number,
    ): Promise<{ approvals: TrackedApproval[]; total: number }>;
    lastReminderPost(approverLogin: string): Promise<EarlierReminder | undefined>;
  };
}

/** A message in whichever language its destination reads. */
type Compose = (t: Messages) => SlackMessage;

// Slack's DM conversation ids start with D; a user id as channel is a DM too.
const isDirect = (channel: string) => /^[DUW]/.test(channel);

/** Without a membership port nobody can be shown to be in a conversation: unsure. */
const NO_MEMBERSHIP: ConversationMembership = {
  isMember: () => Promise.reject(new Error('no membership lookup')),
};

/**
 * Who reads a post to `channel`: the person it is addressed to (`reader`: found by their login
 * through the identities as it goes), the approval's own conversation (where it was asked), or
 * one person when the channel is a user id, whose login is looked up when the policy needs it.
 */
function destinationOf(
  approval: TrackedApproval,
  channel: string,
  reader: Person | undefined,
  loginOf: (chatId: string) => Promise<string | null>,
): Destination {
  if (reader) return { kind: 'dm', person: reader };
  if (channel === approval.channelId || !/^[UW]/.test(channel))
    return { kind: 'conversation', id: channel };
  return {
    kind: 'dm',
    person: { chatId: channel, login: null },
    lookUpLogin: () => loginOf(channel),
  };
}

/** A person the app addresses: their chat account now, and the login that is them. */
type Reader = Person & { chatId: string; login: string };

/** Posts announcements to Slack, each tagged with its id in message metadata. */
export function createSlackAnnouncer(options: SlackAnnouncerOptions): Announcer {
  const { client, people } = options;

  /** Many read a channel: the workspace's language. One person reads a DM: their own. */
  const languageAt = (channel: string, approval: TrackedApproval): Messages =>
    isDirect(channel) ? messagesFor(approval.locale) : messagesIn(options.channelLanguage);

  /** Posts to a conversation, or to a person (`to`: a Reader) in their DM. */
  async function post(
    attempt: AttemptClock,
    approval: TrackedApproval,
    to: string | Reader,
    message: SlackMessage,
    a: Announcement,
    threadTs?: string,
  ): Promise<Posted> {
    const channel = typeof to === 'string' ? to : to.chatId;
    await checkAudience(attempt, approval, channel, typeof to === 'string' ? undefined : to, a);
    attempt.check();
    const result = await call('chat.postMessage', () =>
      client.chat.postMessage({
        channel,
        text: message.text,
        blocks: message.blocks,
        ...(threadTs ? { thread_ts: threadTs } : {}),
        unfurl_links: false,
        metadata: {
          event_type: ANNOUNCEMENT_EVENT,
          event_payload: { announcement_id: a.id, djbh: a.djbh },
        },
      }),
    );
    return { channel: result.channel ?? channel, ts: result.ts ?? '' };
  }

  async function permalink(
    attempt: AttemptClock,
    channel: string,
    ts: string,
  ): Promise<string | undefined> {
    attempt.check();
    try {
      return (
        await call('chat.getPermalink', () => client.chat.getPermalink({ channel, message_ts: ts }))
      ).permalink;
    } catch (error) {
      // Only a link: the DM goes out without it, unless the token itself is refused.
      if (classOf(error) === 'pause') throw error;
      return undefined;
    }
  }

  /**
   * The Slack user of a service login of this approval (its approver unless named) now, through
   * the identities: never the account the approval recorded as it started, which a link changed
   * or removed since no longer makes them.
   */
  async function slackUserOf(
    attempt: AttemptClock,
    approval: TrackedApproval,
    login = approval.approverLogin,
  ): Promise<string | null> {
    attempt.check();
    return call('users.lookupByEmail', () => options.identities.slackUserOf(login));
  }

  /**
   * Whether the account the approval recorded for its approver is deactivated: Slack's lookup by
   * e-mail no longer finds a deactivated account, and the requester is told "deactivated" rather
   * than "not on Slack". Only for those words: nothing is ever addressed to a recorded account.
   */
  async function recordedAccountDeactivated(
    attempt: AttemptClock,
    approval: TrackedApproval,
  ): Promise<boolean> {
    const recorded = approval.approverSlackId;
    if (!recorded) return false;
    attempt.check();
    const account = await call('users.info', () => people.get(recorded)).catch((error) => {
      if (classOf(error) === 'pause') throw error;
      return undefined;
    });
    return account?.presence.deactivated === true;
  }

  /**
   * The requester as they can be reached now. Not on Slack any more under their login (unlinked,
   * ACCOUNT_LINKING changed): nobody may be sent their DM in their place, so nothing is posted.
   */
  async function requesterOf(attempt: AttemptClock, approval: TrackedApproval): Promise<Reader> {
    const chatId = await slackUserOf(attempt, approval, approval.requesterLogin);
    if (!chatId)
      throw new AnnounceError(`the requester of ${approval.djbh} is not on Slack now`, {
        retryable: false,
      });
    return { chatId, login: approval.requesterLogin };
  }

  /**
   * Every post goes through the audience check (approvals/audience.ts) before it is made: a
   * message that carries the approval's title or note goes only where everyone who reads it may see
   * the approval. Refused: an AnnounceError that is not retried (nothing is posted, the outbox
   * records why); unsure (the chat could not say who is there): retried. An edit is not checked
   * again: it rewrites a message that was checked when it was posted, where it was posted.
   */
  async function checkAudience(
    attempt: AttemptClock,
    approval: TrackedApproval,
    channel: string,
    reader: Reader | undefined,
    a: Announcement,
  ): Promise<void> {
    const carries = carriedBy(a.kind);
    if (carries === 'nothing') return;
    attempt.check();
    const to = destinationOf(approval, channel, reader, (chatId) =>
      options.identities.loginOf(chatId),
    );
    const verdict = await mayReach(
      to,
      carries,
      audienceOf(approval),
      options.membership ?? NO_MEMBERSHIP,
    );
    if (verdict === 'allowed') return;
    options.logger?.info(
      { announcement: a.id, channel, verdict },
      'not posted: someone who reads there may not see this approval',
    );
    throw new AnnounceError(`audience ${verdict}: ${channel} may not read ${approval.djbh}`, {
      retryable: verdict === 'unsure',
      uncertain: false,
    });
  }

  /**
   * The person behind a login of this approval (the approver's when none is given), with their
   * Slack account when one is found; a lookup that fails names them by login, unless the token
   * itself is refused.
   */
  async function personOf(
    attempt: AttemptClock,
    approval: TrackedApproval,
    login: string | null = approval.approverLogin,
  ): Promise<Person> {
    const wanted = login ?? approval.approverLogin;
    const chatId = await slackUserOf(attempt, approval, wanted).catch((error) => {
      if (classOf(error) === 'pause') throw error;
      return null;
    });
    return { chatId, login: wanted };
  }

  /** Tells the requester in their DM, prefixed with which request it is about. */
  async function toRequesterDm(
    attempt: AttemptClock,
    approval: TrackedApproval,
    compose: Compose,
    a: Announcement,
  ): Promise<Posted> {
    const t = messagesFor(approval.locale);
    const requester = await requesterOf(attempt, approval);
    return post(attempt, approval, requester, buildRequesterDm(approval, t, compose(t)), a);
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
      return await post(attempt, approval, approval.channelId, message, a, thread);
    } catch (error) {
      if (classOf(error) !== 'fallback') throw error;
      return toRequesterDm(attempt, approval, compose, a);
    }
  }

  async function approverDm(
    attempt: AttemptClock,
    a: Announcement,
    approval: TrackedApproval,
  ): Promise<Posted> {
    const rule = ruleOf(a.kind);
    // An edit needs the DM we sent; nothing to edit when none was sent.
    const sent =
      rule.repeatable && options.sentDm
        ? await options.sentDm(approval.djbh, approval.approverTerm)
        : undefined;
    if (rule.repeatable && !sent) return NOTHING_POSTED;
    const approverId = await slackUserOf(attempt, approval);
    if (!approverId) {
      // Not on Slack: as unreachable as a deactivated account. Recorded with the delivery, which
      // stops reminders and queues the note that tells the requester (once) and offers Request
      // again; an edit has nothing to say.
      if (rule.fallback !== 'tell-requester') return NOTHING_POSTED;
      return { ...NOTHING_POSTED, approverUnreachable: true };
    }
    try {
      const approver = { chatId: approverId, login: approval.approverLogin };
      const posted = await toApprover(attempt, a, approval, approver, sent);
      // An approver the service handed it to, found by their login: recorded with the delivery.
      return approval.approverTerm > 0 && !approval.approverSlackId && !posted.approverUnreachable
        ? { ...posted, approverChatId: approverId }
        : posted;
    } catch (error) {
      if (classOf(error) !== 'fallback') throw error;
      // Deactivated, gone or hidden from the app: recorded with the delivery, which stops the
      // reminders and queues the note that tells the requester in the thread.
      return { ...NOTHING_POSTED, approverUnreachable: true };
    }
  }

  async function toApprover(
    attempt: AttemptClock,
    a: Announcement,
    approval: TrackedApproval,
    reader: Reader,
    sent: Posted | undefined,
  ): Promise<Posted> {
    const thread = approval.messageTs ?? undefined;
    attempt.check();
    const approver = await call('users.info', () => people.get(reader.chatId));
    // Deactivated: Slack may still take a post to an existing DM with them, which nobody reads.
    // As unreachable as a refused post: recorded with the delivery, which stops the reminders and
    // tells the requester once.
    if (approver.presence.deactivated) return { ...NOTHING_POSTED, approverUnreachable: true };
    if (a.kind === 'reminder' && options.digest) {
      const day = await reminderOfTheDay(attempt, a, approval, reader, approver);
      if (day.as === 'covered') return day.by;
      if (day.as === 'digest') return post(attempt, approval, reader, day.message, a);
    }
    const link = thread ? await permalink(attempt, approval.channelId, thread) : undefined;
    const links = {
      ...(link ? { thread: link } : {}),
      ...(options.webListUrl ? { listUrl: options.webListUrl } : {}),
    };
    const dm = buildApproverAnnouncement(
      a,
      approval,
      messagesFor(approver.locale),
      links,
      waitedMs(a, approval, approver.timeZone),
    );
    if (!sent) return post(attempt, approval, reader, dm, a);
    return edit(attempt, a, sent, dm);
  }

  /**
   * The escalation DM to the approver's leader, in the leader's language: what the approver's DM
   * says (title, number, note) and the same links (the thread, the approval service), opened by
   * who has waited how long for whom. No button decides anything: only the approver can, in the
   * service. A leader Slack will not let us reach gets nothing, and nobody is told instead.
   */
  async function leaderDm(
    attempt: AttemptClock,
    a: Announcement,
    approval: TrackedApproval,
  ): Promise<Posted> {
    const escalatedTo = approval.escalatedTo;
    if (!escalatedTo) return NOTHING_POSTED;
    // The leader by their login, on the account that is theirs now; none: nobody is told.
    const chatId = await slackUserOf(attempt, approval, escalatedTo.login);
    if (!chatId) return NOTHING_POSTED;
    const to: Reader = { chatId, login: escalatedTo.login };
    try {
      attempt.check();
      const leader = await call('users.info', () => people.get(to.chatId));
      // Deactivated since they were chosen: a DM nobody reads is not an escalation.
      if (leader.presence.deactivated) return NOTHING_POSTED;
      const thread = approval.messageTs;
      const link = thread ? await permalink(attempt, approval.channelId, thread) : undefined;
      // The wait is the approver's: counted in their working hours.
      const approverId = await slackUserOf(attempt, approval).catch(() => null);
      const approverZone = approverId
        ? (people.cached(approverId)?.timeZone ??
          (await people.get(approverId).catch(() => undefined))?.timeZone)
        : undefined;
      const dm = buildLeaderDm(
        a,
        approval,
        messagesFor(leader.locale),
        {
          ...(link ? { thread: link } : {}),
          ...(options.webUrl ? { webUrl: options.webUrl } : {}),
        },
        waitedMs(a, approval, approverZone),
      );
      return await post(attempt, approval, to, dm, a);
    } catch (error) {
      if (classOf(error) !== 'fallback') throw error;
      return NOTHING_POSTED;
    }
  }

  /**
   * A person's Slack name, for text that names them without notifying them (a mention would);
   * their login when Slack no longer knows them. Slack being down is retried as usual.
   */
  /**
   * How this reminder reaches the approver (reminder-digest.ts): alone, as the day's digest of
   * everything waiting for them (built here), or inside the digest already posted today. The
   * reminder's recording time is "now": it was recorded inside their working hours.
   */
  async function reminderOfTheDay(
    attempt: AttemptClock,
    a: Announcement,
    approval: TrackedApproval,
    reader: Reader,
    approver: { timeZone: string | undefined; locale: string },
  ): Promise<
    { as: 'single' } | { as: 'covered'; by: Posted } | { as: 'digest'; message: SlackMessage }
  > {
    const digest = options.digest;
    if (!digest) return { as: 'single' };
    const { timeZone } = approver;
    const zone = options.workingHours
      ? zoneOrDefault(timeZone, options.workingHours)
      : timeZone && isKnownTimeZone(timeZone)
        ? timeZone
        : 'UTC';
    const [earlier, page] = await Promise.all([
      digest.lastReminderPost(approval.approverLogin),
      digestOf(attempt, reader),
    ]);
    const how = reminderDelivery({
      recordedAt: a.createdAt,
      waiting: page.total,
      earlier,
      sameDay: (x, y) => sameLocalDay(x, y, zone),
    });
    if (how.as !== 'digest') return how;
    const items: DigestItem[] = [];
    for (const waiting of page.approvals) {
      const link = waiting.messageTs
        ? await permalink(attempt, waiting.channelId, waiting.messageTs)
        : undefined;
      items.push({
        approval: waiting,
        ...(link ? { link } : {}),
        waitedMs:
          waitedMs(a, waiting, timeZone) ?? a.createdAt.getTime() - waiting.createdAt.getTime(),
      });
    }
    const t = messagesFor(approver.locale);
    return { as: 'digest', message: buildReminderDigest(items, page.total, t) };
  }

  /**
   * What a digest to `reader` lists (reminder-digest.ts, digestEntries): the approvals waiting for
   * them to decide, each checked on its own against who may see it (a list is as private as its
   * most private item), never the approvals only escalated to them (they cannot decide those).
   * An approval whose check is unsure is left out: a list is never the place to fail open.
   */
  async function digestOf(
    attempt: AttemptClock,
    reader: Reader,
  ): Promise<{ approvals: TrackedApproval[]; total: number }> {
    const digest = options.digest;
    if (!digest) return { approvals: [], total: 0 };
    attempt.check();
    const page = await digest.waitingFor(reader.login, DIGEST_SCAN);
    const verdicts = await Promise.all(
      page.approvals.map((w) =>
        mayReach(
          { kind: 'dm', person: reader },
          'title-and-note',
          audienceOf(w),
          options.membership ?? NO_MEMBERSHIP,
        ),
      ),
    );
    const listed = digestEntries(
      page.approvals.filter((_, i) => verdicts[i] === 'allowed'),
      reader.login,
    );
    // Beyond what was read, counted as the store counts them: still waiting, not yet checked.
    const unread = Math.max(0, page.total - page.approvals.length);
    return { approvals: listed.slice(0, DIGEST_LISTED), total: listed.length + unread };
  }

  /** How long the approval had waited when `a` was recorded, in working time when hours are set. */
  function waitedMs(
    a: Announcement,
    approval: TrackedApproval,
    timeZone: string | undefined,
  ): number | undefined {
    const hours = options.workingHours;
    if (!hours) return undefined;
    return workingWait(approval.createdAt, a.createdAt, zoneOrDefault(timeZone, hours), hours);
  }

  async function plainName(attempt: AttemptClock, chatId: string, login: string): Promise<string> {
    attempt.check();
    try {
      return (await call('users.info', () => people.get(chatId))).name;
    } catch (error) {
      if (classOf(error) !== 'fallback' && classOf(error) !== 'done') throw error;
      return login;
    }
  }

  /** Edits a message we posted; an edit with nothing left to edit (deleted, locked) is done. */
  async function edit(
    attempt: AttemptClock,
    a: Announcement,
    target: { channel: string; ts: string },
    message: SlackMessage,
  ): Promise<Posted> {
    attempt.check();
    try {
      await call('chat.update', () =>
        client.chat.update({
          channel: target.channel,
          ts: target.ts,
          text: message.text,
          blocks: message.blocks,
        }),
      );
    } catch (error) {
      if (classOf(error) !== 'done') throw error;
      options.logger?.info(
        { announcement: a.id, reason: (error as SlackCallError).code },
        'the message to edit is gone or can no longer be edited; nothing left to do',
      );
      return NOTHING_POSTED;
    }
    return { channel: target.channel, ts: target.ts };
  }

  async function deliver(
    a: Announcement,
    approval: TrackedApproval,
    attempt: AttemptClock,
  ): Promise<Posted> {
    const thread = replyThread(approval) ?? undefined;
    // Its button leads to the approver's list: the approver is who acts on it in the service.
    const request: Compose = (t) => buildRequestMessage(approval, t, options.webListUrl);
    switch (a.kind) {
      case 'request': {
        const channel = approval.channelId;
        const asked = approval.threadTs ?? undefined;
        try {
          return await post(
            attempt,
            approval,
            channel,
            request(languageAt(channel, approval)),
            a,
            asked,
          );
        } catch (error) {
          if (classOf(error) !== 'fallback') throw error;
          const requester = await requesterOf(attempt, approval);
          return post(
            attempt,
            approval,
            requester,
            request(languageAt(requester.chatId, approval)),
            a,
          );
        }
      }
      case 'approver-dm':
      case 'reminder':
      case 'approver-dm-update':
        return approverDm(attempt, a, approval);
      case 'reminder-note': {
        // Only worth saying in the thread; without one, the requester needs no note.
        if (!thread) return NOTHING_POSTED;
        const t = languageAt(approval.channelId, approval);
        // Named, not mentioned: the reminder is the approver's DM; the thread only says it went.
        const approverId = await slackUserOf(attempt, approval);
        const approver = approverId
          ? await plainName(attempt, approverId, approval.approverLogin)
          : approval.approverLogin;
        return post(
          attempt,
          approval,
          approval.channelId,
          buildReminderNote(a, t, approver),
          a,
          thread,
        );
      }
      case 'decision': {
        // Credits whoever the service says decided, never the recorded approver's account when
        // the service gave the approval to someone else (decidedBy is its reported login).
        const decider = await personOf(attempt, approval, approval.decidedBy);
        return replyOrDm(
          attempt,
          approval,
          (t) => buildDecisionAnnouncement(a, approval, t, decider),
          a,
        );
      }
      case 'gave-up':
        return replyOrDm(attempt, approval, (t) => buildGaveUpReply(t, options.giveUpAfterDays), a);
      case 'ended':
        return replyOrDm(attempt, approval, (t) => buildEndedReply(approval, t), a);
      case 'approver-unreachable': {
        // Never on Slack, or on Slack but deactivated or hidden: the requester is told which.
        const onSlack =
          Boolean(await slackUserOf(attempt, approval)) ||
          (await recordedAccountDeactivated(attempt, approval));
        return replyOrDm(
          attempt,
          approval,
          (t) => buildApproverUnreachableReply(approval, t, onSlack),
          a,
        );
      }
      case 'escalation':
        return leaderDm(attempt, a, approval);
      case 'escalation-note': {
        const to = approval.escalatedTo;
        // Said only when the leader's DM went out: never "escalated" when nobody was told.
        const dm =
          to &&
          (await options.sentPost?.(
            announcementId(approval.djbh, 'escalation', a.occurrence ?? undefined),
          ));
        if (!to || !dm) return NOTHING_POSTED;
        // Named, not mentioned: a mention would notify the leader a second time, beside their DM.
        const leaderId = await slackUserOf(attempt, approval, to.login);
        const leader = leaderId ? await plainName(attempt, leaderId, to.login) : to.login;
        return replyOrDm(attempt, approval, (t) => buildEscalationNote(a, approval, t, leader), a);
      }
      case 'vanished':
        return replyOrDm(attempt, approval, (t) => buildVanishedReply(approval, t), a);
      case 'handed-over': {
        const before = approval.formerApprovers.at(-1);
        // Handed on again before this went out: the approval knows only the latest handover,
        // which its own note tells; this one would name the wrong people.
        if (!before?.login || a.occurrence !== approval.approverTerm) {
          options.logger?.info(
            { announcement: a.id, term: approval.approverTerm },
            'handed over again before the note went out; the latest note tells it',
          );
          return NOTHING_POSTED;
        }
        // Named, not mentioned: the new approver hears in their DM; the one before is done.
        const fromId = await slackUserOf(attempt, approval, before.login);
        const from = fromId ? await plainName(attempt, fromId, before.login) : before.login;
        const next = await personOf(attempt, approval);
        const to = next.chatId
          ? await plainName(attempt, next.chatId, approval.approverLogin)
          : approval.approverLogin;
        return replyOrDm(attempt, approval, (t) => buildHandedOverNote(t, from, to), a);
      }
      case 'parent-update': {
        // Editing is idempotent: it always shows the latest state, whichever change queued it.
        const ts = approval.messageTs;
        if (!ts) return NOTHING_POSTED;
        // The new request's link, where the message names it (posted in the same conversation).
        const again = approval.requestedAgainAs?.message;
        const againLink =
          again && again.channelId === approval.channelId
            ? await permalink(attempt, again.channelId, again.ts)
            : undefined;
        const message = buildRequestMessage(
          approval,
          languageAt(approval.channelId, approval),
          options.webListUrl,
          againLink,
        );
        return edit(attempt, a, { channel: approval.channelId, ts }, message);
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
          ? await slackUserOf(attempt, approval, outcome.decidedByLogin).catch((error) => {
              if (classOf(error) === 'pause') throw error;
              return null;
            })
          : null;
        // The lookup's catch must not let a call start past the attempt's deadline.
        attempt.check();
        await call('functions.completeSuccess', () =>
          client.functions.completeSuccess({
            function_execution_id: id,
            outputs: {
              approval_number: outcome.approvalNumber,
              decision: outcome.decision,
              decided_at: outcome.decidedAt,
              ...(decidedBy ? { decided_by: decidedBy } : {}),
            },
          }),
        );
      } else {
        const t = messagesIn(options.channelLanguage);
        await call('functions.completeError', () =>
          client.functions.completeError({
            function_execution_id: id,
            error: t.stepFailed(outcome.reason, approval.djbh, options.giveUpAfterDays),
          }),
        );
      }
    } catch (error) {
      // Completed already: an earlier attempt got through although its answer was lost.
      if (classOf(error) === 'done') return NOTHING_POSTED;
      throw error;
    }
    return NOTHING_POSTED;
  }

  return {
    async deliver(a, approval, attempt) {
      try {
        return await deliver(a, approval, attempt);
      } catch (error) {
        throw asAnnounceError(error);
      }
    },
    // Without the history scopes there is nothing to search with: an unknown outcome is posted again.
    findDelivered:
      options.searchesForEarlierPosts === false
        ? async () => undefined
        : createRecoverySearch({ client, slackUserOf }),
    async checkCredentials() {
      try {
        await call('auth.test', () => client.auth.test());
        return 'ok';
      } catch (error) {
        return classOf(error) === 'pause' ? 'refused' : 'unknown';
      }
    },
    async afterDelivered(a, approval) {
      // What people see on their Home tab changed with a new request or a change of state: the
      // Home of whoever is each of its people now.
      const home = options.home;
      // Without Home tabs nobody is looked up: this runs beside the next delivery, not in it.
      if (!home) return;
      if (a.kind === 'request' || a.kind === 'parent-update' || a.kind === 'handed-over') {
        const logins = [
          approval.requesterLogin,
          approval.approverLogin,
          // Handed to someone else: it leaves the Home of the one who had it.
          approval.formerApprovers.at(-1)?.login ?? null,
        ];
        const found = await Promise.all(
          logins.map((login) =>
            login ? options.identities.slackUserOf(login).catch(() => null) : null,
          ),
        );
        await home.refresh(found);
      }
    },
  };
}
