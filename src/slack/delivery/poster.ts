import type { WebClient } from '@slack/web-api';
import type { ConversationMembership } from '../../approvals/access-policy.ts';
import {
  AnnounceError,
  type AttemptClock,
  NOTHING_POSTED,
  type Posted,
} from '../../approvals/announcer.ts';
import { audienceOf, carriedBy, type Destination, mayReach } from '../../approvals/audience.ts';
import type { Person } from '../../approvals/person.ts';
import type { Announcement, TrackedApproval } from '../../approvals/tracked-approval.ts';
import type { SlackMessage } from '../blocks/request-message.ts';
import { ANNOUNCEMENT_EVENT } from '../ids.ts';
import type { Identities } from '../people/identities.ts';
import { call, classOf, type SlackCallError } from './slack-call.ts';

/*
 * The one place an announcement reaches Slack: a post (after the audience check), an edit of a
 * message posted before, or a message's permalink. Every handler (handlers/) posts through it, so
 * no post skips the check and every post carries its announcement's id.
 */

/** A person the app addresses: their chat account now, and the login that is them. */
export type Reader = Person & { chatId: string; login: string };

export interface PosterOptions {
  client: WebClient;
  identities: Identities;
  /** Who is in a conversation; without it a post to a conversation other than the approval's own is never made. */
  membership?: ConversationMembership;
  logger?: { info(obj: object, msg: string): void };
}

export interface Poster {
  /** Posts to a conversation, or to a person (`to`: a Reader) in their DM, once the audience allows it. */
  post(
    attempt: AttemptClock,
    approval: TrackedApproval,
    to: string | Reader,
    message: SlackMessage,
    a: Announcement,
    threadTs?: string,
  ): Promise<Posted>;
  /** Edits a message we posted; an edit with nothing left to edit (deleted, locked) is done. */
  edit(
    attempt: AttemptClock,
    a: Announcement,
    target: { channel: string; ts: string },
    message: SlackMessage,
  ): Promise<Posted>;
  /** A message's link; undefined when Slack gives none (only a token refused is thrown). */
  permalink(attempt: AttemptClock, channel: string, ts: string): Promise<string | undefined>;
  /** Whether `reader` may read an approval's title and note in their DM (WHO_MAY, via audience.ts). */
  mayShow(reader: Reader, approval: TrackedApproval): Promise<boolean>;
}

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
  if (channel === approval.slack.channelId || !/^[UW]/.test(channel))
    return { kind: 'conversation', id: channel };
  return {
    kind: 'dm',
    person: { chatId: channel, login: null },
    lookUpLogin: () => loginOf(channel),
  };
}

type Env = PosterOptions & { membership: ConversationMembership };

export function createPoster(options: PosterOptions): Poster {
  const env: Env = { ...options, membership: options.membership ?? NO_MEMBERSHIP };
  return {
    post: (attempt, approval, to, message, a, threadTs) =>
      post(env, attempt, approval, to, message, a, threadTs),
    edit: (attempt, a, target, message) => edit(env, attempt, a, target, message),
    permalink: (attempt, channel, ts) => permalink(env, attempt, channel, ts),
    // A list is as private as its most private item: each one is checked on its own, and one
    // whose check is unsure is left out (a list is never the place to fail open).
    mayShow: async (reader, approval) =>
      (await mayReach(
        { kind: 'dm', person: reader },
        'title-and-note',
        audienceOf(approval),
        env.membership,
      )) === 'allowed',
  };
}

/**
 * Every post goes through the audience check (approvals/audience.ts) before it is made: a message
 * that carries the approval's title or note goes only where everyone who reads it may see the
 * approval. Refused: an AnnounceError that is not retried (nothing is posted, the outbox records
 * why); unsure (the chat could not say who is there): retried. An edit is not checked again: it
 * rewrites a message that was checked when it was posted, where it was posted.
 */
async function checkAudience(
  env: Env,
  attempt: AttemptClock,
  approval: TrackedApproval,
  channel: string,
  reader: Reader | undefined,
  a: Announcement,
): Promise<void> {
  const carries = carriedBy(a.kind);
  if (carries === 'nothing') return;
  attempt.check();
  const to = destinationOf(approval, channel, reader, (chatId) => env.identities.loginOf(chatId));
  const verdict = await mayReach(to, carries, audienceOf(approval), env.membership);
  if (verdict === 'allowed') return;
  env.logger?.info(
    { announcement: a.id, channel, verdict },
    'not posted: someone who reads there may not see this approval',
  );
  throw new AnnounceError(`audience ${verdict}: ${channel} may not read ${approval.djbh}`, {
    retryable: verdict === 'unsure',
    uncertain: false,
  });
}

async function post(
  env: Env,
  attempt: AttemptClock,
  approval: TrackedApproval,
  to: string | Reader,
  message: SlackMessage,
  a: Announcement,
  threadTs: string | undefined,
): Promise<Posted> {
  const channel = typeof to === 'string' ? to : to.chatId;
  await checkAudience(env, attempt, approval, channel, typeof to === 'string' ? undefined : to, a);
  attempt.check();
  const result = await call('chat.postMessage', () =>
    env.client.chat.postMessage({
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

async function edit(
  env: Env,
  attempt: AttemptClock,
  a: Announcement,
  target: { channel: string; ts: string },
  message: SlackMessage,
): Promise<Posted> {
  attempt.check();
  try {
    await call('chat.update', () =>
      env.client.chat.update({
        channel: target.channel,
        ts: target.ts,
        text: message.text,
        blocks: message.blocks,
      }),
    );
  } catch (error) {
    if (classOf(error) !== 'done') throw error;
    env.logger?.info(
      { announcement: a.id, reason: (error as SlackCallError).code },
      'the message to edit is gone or can no longer be edited; nothing left to do',
    );
    return NOTHING_POSTED;
  }
  return { channel: target.channel, ts: target.ts };
}

async function permalink(
  env: Env,
  attempt: AttemptClock,
  channel: string,
  ts: string,
): Promise<string | undefined> {
  attempt.check();
  try {
    return (
      await call('chat.getPermalink', () =>
        env.client.chat.getPermalink({ channel, message_ts: ts }),
      )
    ).permalink;
  } catch (error) {
    // Only a link: the message goes out without it, unless the token itself is refused.
    if (classOf(error) === 'pause') throw error;
    return undefined;
  }
}
