import type {
  AllMiddlewareArgs,
  App,
  BlockAction,
  ButtonAction,
  SlackActionMiddlewareArgs,
} from '@slack/bolt';
import { partiesOf } from '../../../approvals/access-policy.ts';
import { mayRequestAgain } from '../../../approvals/request-again.ts';
import type { TrackedApproval } from '../../../approvals/tracked-approval.ts';
import { logFailure } from '../../../logger.ts';
import { personRef } from '../../blocks/request-message.ts';
import { messagesFor } from '../../i18n.ts';
import { ACTION } from '../../ids.ts';
import { openApprovalForm } from '../../requests/open-approval-form.ts';
import type { SlackDeps } from '../../slack-deps.ts';

type Deps = Pick<
  SlackDeps,
  | 'people'
  | 'identities'
  | 'service'
  | 'logger'
  | 'now'
  | 'store'
  | 'access'
  | 'templates'
  | 'delegations'
>;
type Args = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;

/**
 * "Request again" on a request that ended without a yes (its message, or the requester's Home):
 * the form opens prefilled with the old title and note and the template that started it (its
 * default approver, away-aware), else the approver suggested afresh (away-aware),
 * and the new request message links to the old one. Only the old requester may (the access
 * policy's `request-again`); anyone else is told so, only them, and nothing opens.
 */
export function requestAgain(deps: Deps) {
  return async ({ ack, body, action, client, respond }: Args): Promise<void> => {
    await ack();
    const userId = body.user.id;
    // Before the form opens nothing may call Slack: the trigger id lives 3 s. The record is ours.
    const old = await deps.store.getApproval(action.value ?? '').catch(() => undefined);
    const t = messagesFor(deps.people.cached(userId)?.locale);
    const answerer = respond as typeof respond | undefined;
    const tell = (text: string) =>
      answerer?.({ response_type: 'ephemeral', replace_original: false, text }).catch(
        () => undefined,
      );
    if (old?.request.requestedAgainAs) {
      await tell(t.alreadyRequestedAgain(old.request.requestedAgainAs.djbh));
      return;
    }
    if (!old || !mayRequestAgain(old)) {
      await tell(t.againUnknown);
      return;
    }
    const verdict = await deps.access.check('request-again', partiesOf(old), userId);
    if (verdict !== 'allowed') {
      await tell(
        t.onlyRequesterAgain(personRef(old.parties.requester.slackId, old.parties.requester.login)),
      );
      return;
    }
    const againOf = { djbh: old.djbh, link: null };
    await openApprovalForm(deps, client, {
      triggerId: body.trigger_id,
      userId,
      // Where the old one was asked (its channel or the DM); its thread, if any, was its own.
      channelId: old.slack.channelId,
      title: old.request.title,
      note: old.request.note,
      againOf,
      refine: async () => {
        const link = old.slack.messageTs
          ? await client.chat
              .getPermalink({ channel: old.slack.channelId, message_ts: old.slack.messageTs })
              .then(
                (r) => r.permalink ?? null,
                (error: unknown) => {
                  logFailure(deps.logger, error, { djbh: old.djbh }, 'no permalink');
                  return null;
                },
              )
          : null;
        const templateId = await templateOf(deps, old);
        return {
          title: old.request.title,
          note: old.request.note,
          againOf: { ...againOf, link },
          templateId,
        };
      },
    });
  };
}

/**
 * The template that started `old`, by the id recorded with it; an approval recorded before ids
 * were names it only, looked up among its channel's templates. None when it came from none.
 */
async function templateOf(
  deps: Pick<Deps, 'templates'>,
  old: Pick<TrackedApproval, 'request' | 'slack'>,
): Promise<string | undefined> {
  const { template } = old.request;
  if (template?.id) return template.id;
  if (!template?.name) return undefined;
  const named = await deps.templates.list(old.slack.channelId).catch(() => []);
  return named.find((x) => x.name === template.name)?.id;
}

export function registerRequestAgain(app: App, deps: Deps): void {
  app.action<BlockAction<ButtonAction>>(
    { type: 'block_actions', action_id: ACTION.requestAgain },
    requestAgain(deps),
  );
}
