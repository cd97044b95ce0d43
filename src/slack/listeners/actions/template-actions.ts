import type {
  AllMiddlewareArgs,
  App,
  BlockAction,
  ButtonAction,
  SlackActionMiddlewareArgs,
} from '@slack/bolt';
import type { ModalView } from '@slack/types';
import { logFailure } from '../../../logger.ts';
import { buildMessageModal } from '../../blocks/approval-modal.ts';
import {
  buildTemplateEditor,
  parseTemplatesMetadata,
  type TemplatesMetadata,
} from '../../blocks/templates-modal.ts';
import { type Messages, messagesFor } from '../../i18n.ts';
import { ACTION, CALLBACK } from '../../ids.ts';
import type { SlackDeps } from '../../slack-deps.ts';
import { templateRefusal, templatesView } from '../../templates/template-manager.ts';

type Deps = Pick<SlackDeps, 'templates' | 'people' | 'access' | 'logger' | 'now'>;
type Args = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;

/**
 * The buttons of the templates modal: Add and Edit turn it into the editor, Remove (in the
 * editor, after Slack's confirmation) removes the template and shows the list again; Edit and
 * Remove only for a member of the channel now. Each replaces the modal by hash, so a modal
 * changed meanwhile is left alone.
 */
export function templateButton(deps: Deps) {
  return async ({ ack, body, action, client, context }: Args): Promise<void> => {
    await ack();
    const view = body.view;
    const metadata = view ? parseTemplatesMetadata(view.private_metadata) : undefined;
    if (!view || !metadata) return;
    const userId = body.user.id;
    const t = messagesFor(metadata.locale);
    const show = (next: ModalView) =>
      client.views.update({ view_id: view.id, hash: view.hash, view: next });
    try {
      // Asked at once, whatever the button: Edit and Remove wait for it, and for Add it warms the
      // channel's member list (shared, in flight included) so that Save is answered in time.
      const verdict = deps.access.templates(metadata.channelId, userId, context.botUserId);
      const pressed = { actionId: action.action_id, value: action.value, userId, t };
      await show(await afterPress(deps, view.callback_id, metadata, pressed, verdict));
    } catch (error) {
      if ((error as { data?: { error?: string } }).data?.error === 'hash_conflict') return;
      logFailure(deps.logger, error, { user: userId }, 'templates modal action failed');
      await client.views
        .update({
          view_id: view.id,
          view: buildMessageModal([t.somethingWrong], t, t.templatesTitle),
        })
        .catch(() => undefined);
    }
  };
}

/** What the modal shows once the button did its part (Remove removes the template first). */
async function afterPress(
  deps: Deps,
  callbackId: string,
  metadata: TemplatesMetadata,
  pressed: { actionId: string; value: string | undefined; userId: string; t: Messages },
  verdict: ReturnType<Deps['access']['templates']>,
): Promise<ModalView> {
  const { userId, t } = pressed;
  if (pressed.actionId === ACTION.templateAdd && callbackId === CALLBACK.templatesModal)
    return buildTemplateEditor(metadata, t);
  // The id comes from the button; the template must be of the channel the modal is about.
  const template = await deps.templates.get(pressed.value ?? '');
  const ours = template && template.channelId === metadata.channelId && !template.removedAt;
  if (!ours) return templatesView(deps, metadata.channelId, userId);
  // Checked again now, since the person may have left the channel since opening the modal: an
  // editor shows the template's text, and Remove changes it.
  const allowed = await verdict;
  if (allowed !== 'allowed')
    return buildMessageModal(
      [templateRefusal(allowed, template.channelId, t, deps.access.templateManagers)],
      t,
      t.templatesTitle,
    );
  if (pressed.actionId === ACTION.templateEdit)
    return buildTemplateEditor({ ...metadata, template }, t);
  await deps.templates.remove(template.id, userId, deps.now());
  return templatesView(deps, template.channelId, userId);
}

export function registerTemplateActions(app: App, deps: Deps): void {
  for (const actionId of [ACTION.templateAdd, ACTION.templateEdit, ACTION.templateRemove])
    app.action<BlockAction<ButtonAction>>(
      { type: 'block_actions', action_id: actionId },
      templateButton(deps),
    );
}
