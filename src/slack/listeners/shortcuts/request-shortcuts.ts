import type {
  AllMiddlewareArgs,
  App,
  GlobalShortcut,
  MessageShortcut,
  SlackShortcutMiddlewareArgs,
} from '@slack/bolt';
import { noteWithSource, titleFromText } from '../../../approvals/prefill.ts';
import { buildMessageModal, NOTE_MAX, TITLE_MAX } from '../../blocks/approval-modal.ts';
import { messagesFor } from '../../i18n.ts';
import { CALLBACK } from '../../ids.ts';
import { localeWithin } from '../../people/slack-people.ts';
import { mentionedUsers, readableText } from '../../requests/message-text.ts';
import { openApprovalForm } from '../../requests/open-approval-form.ts';
import type { SlackDeps } from '../../slack-deps.ts';

type Deps = Pick<
  SlackDeps,
  'people' | 'identities' | 'service' | 'logger' | 'now' | 'templates' | 'access' | 'delegations'
>;

/** How long the answer on the app's own message waits for the locale; the trigger lasts 3 s. */
const OWN_LOCALE_WAIT_MS = 1000;

/**
 * "Request approval" on a message: the form, titled with the message's first line and noting its
 * text and permalink; the request joins the message's thread (or goes to the DM when the app is
 * not in that channel).
 */
export function messageShortcut(deps: Deps) {
  return async ({
    ack,
    shortcut,
    client,
    context,
  }: SlackShortcutMiddlewareArgs<MessageShortcut> & AllMiddlewareArgs): Promise<void> => {
    await ack();
    const { message, channel } = shortcut;
    // Slack offers the shortcut on every message, the app's own too. A request card would make a
    // title like "Approval request: … — Pending · 待办": its approval is followed in its thread.
    const own =
      (context.botId !== undefined && message.bot_id === context.botId) ||
      (context.botUserId !== undefined && message.user === context.botUserId);
    if (own) {
      const t = messagesFor(await localeWithin(deps.people, shortcut.user.id, OWN_LOCALE_WAIT_MS));
      await client.views.open({
        trigger_id: shortcut.trigger_id,
        view: buildMessageModal([t.shortcutOnOwnMessage], t),
      });
      return;
    }
    const text = message.text ?? '';
    const prefill = (link?: string) => {
      const readable = readableText(text, (id) => deps.people.cached(id)?.name);
      return {
        title: titleFromText(readable, TITLE_MAX),
        note: noteWithSource(readable, link, NOTE_MAX),
      };
    };
    await openApprovalForm(deps, client, {
      triggerId: shortcut.trigger_id,
      userId: shortcut.user.id,
      channelId: channel.id,
      // A reply's thread is its parent's: Slack threads are one level deep.
      threadTs: message.thread_ts ?? message.ts,
      ...prefill(),
      refine: async () => {
        await Promise.all(mentionedUsers(text).map((id) => deps.people.get(id).catch(() => null)));
        const link = await client.chat
          .getPermalink({ channel: channel.id, message_ts: message.ts })
          .then(
            (r) => r.permalink,
            // A conversation the app cannot see (another people's DM): the note goes without it.
            () => undefined,
          );
        return prefill(link);
      },
    });
  };
}

/** "Request approval" from the ⚡ menu: the form with a channel picker; none picked is the DM. */
export function globalShortcut(deps: Deps) {
  return async ({
    ack,
    shortcut,
    client,
  }: SlackShortcutMiddlewareArgs<GlobalShortcut> & AllMiddlewareArgs): Promise<void> => {
    await ack();
    await openApprovalForm(deps, client, {
      triggerId: shortcut.trigger_id,
      userId: shortcut.user.id,
      channelId: '',
      pickChannel: true,
      title: '',
    });
  };
}

export function registerShortcuts(app: App, deps: Deps): void {
  app.shortcut<MessageShortcut>(
    { callback_id: CALLBACK.messageShortcut, type: 'message_action' },
    messageShortcut(deps),
  );
  app.shortcut<GlobalShortcut>(
    { callback_id: CALLBACK.globalShortcut, type: 'shortcut' },
    globalShortcut(deps),
  );
}
