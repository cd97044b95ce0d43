import type { AllMiddlewareArgs, App, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { logFailure } from '../../../logger.ts';
import { fillApprovalForm } from '../../approval-form.ts';
import { parseApproveCommand } from '../../approve-subcommand.ts';
import { buildApprovalModal, buildMessageModal } from '../../blocks/approval-modal.ts';
import { messagesFor } from '../../i18n.ts';
import type { SlackDeps } from '../../slack-deps.ts';
import {
  helpSubcommand,
  linkSubcommand,
  listSubcommand,
  statusSubcommand,
  unlinkSubcommand,
} from './subcommands.ts';

type Deps = Pick<SlackDeps, 'people' | 'identities' | 'links' | 'service' | 'store' | 'logger'>;
type Args = SlackCommandMiddlewareArgs & AllMiddlewareArgs;

/** `/approve …`: the form, or one of the subcommands (help, status, list, link, unlink). */
export function approveCommand(deps: Deps) {
  const openForm = approvalForm(deps);
  const run = async (args: Args): Promise<void> => {
    const command = parseApproveCommand(args.command.text);
    switch (command.kind) {
      case 'new':
        return openForm(args, command.title);
      case 'help':
        return helpSubcommand(deps, args);
      case 'status':
        return statusSubcommand(deps, args, command.djbh);
      case 'list':
        return listSubcommand(deps, args);
      case 'link':
        return linkSubcommand(deps, args);
      case 'unlink':
        return unlinkSubcommand(deps, args);
    }
  };
  // Every subcommand acknowledges first; whatever fails after that, the person is told.
  return async (args: Args): Promise<void> => {
    try {
      await run(args);
    } catch (error) {
      logFailure(deps.logger, error, { user: args.command.user_id }, '/approve failed');
      const t = messagesFor(deps.people.cached(args.command.user_id)?.locale);
      await args
        .respond({ response_type: 'ephemeral', text: t.somethingWrong })
        .catch(() => undefined);
    }
  };
}

/**
 * `/approve [title]`: acknowledges, opens the form at once (the trigger id lives 3 s), then looks
 * the person up and fills in their department and suggested approver with views.update.
 */
function approvalForm(deps: Deps) {
  return async ({ ack, command, client }: Args, title: string): Promise<void> => {
    await ack();
    // Before the first users.info answer we do not know the language; a cached one is used if any.
    const t = messagesFor(deps.people.cached(command.user_id)?.locale);
    let opened: Awaited<ReturnType<typeof client.views.open>>;
    try {
      opened = await client.views.open({
        trigger_id: command.trigger_id,
        view: buildApprovalModal(
          {
            title,
            note: '',
            info: [t.lookingUp],
            metadata: { channelId: command.channel_id, locale: 'en-US' },
          },
          t,
        ),
      });
    } catch (error) {
      // Typically expired_trigger_id: Slack took too long to reach us. The person can run it again.
      logFailure(deps.logger, error, { user: command.user_id }, 'could not open the approval form');
      return;
    }
    const viewId = opened.view?.id;
    if (!viewId) return;
    try {
      const filled = await fillApprovalForm(deps, {
        userId: command.user_id,
        channelId: command.channel_id,
        title,
      });
      await client.views.update({
        view_id: viewId,
        hash: opened.view?.hash,
        view: buildApprovalModal(filled.state, filled.t),
      });
    } catch (error) {
      // A hash conflict means the person already moved on (submitted or closed): nothing to fill.
      if ((error as { data?: { error?: string } }).data?.error === 'hash_conflict') return;
      logFailure(deps.logger, error, { user: command.user_id }, 'could not fill the approval form');
      await client.views
        .update({ view_id: viewId, view: buildMessageModal([t.somethingWrong], t) })
        .catch(() => undefined);
    }
  };
}

export function registerCommands(app: App, deps: Deps): void {
  app.command('/approve', approveCommand(deps));
}
