import type { AllMiddlewareArgs, App, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { logFailure } from '../../../logger.ts';
import { messagesFor } from '../../i18n.ts';
import { parseApproveCommand } from '../../requests/approve-subcommand.ts';
import { openApprovalForm } from '../../requests/open-approval-form.ts';
import type { SlackDeps } from '../../slack-deps.ts';
import { reportSubcommand } from './report-subcommand.ts';
import {
  helpSubcommand,
  linkSubcommand,
  listSubcommand,
  statusSubcommand,
  templatesSubcommand,
  unlinkSubcommand,
} from './subcommands.ts';

type Deps = Pick<
  SlackDeps,
  | 'people'
  | 'identities'
  | 'delegations'
  | 'links'
  | 'accountLinking'
  | 'service'
  | 'store'
  | 'logger'
  | 'access'
  | 'now'
  | 'templates'
  | 'reports'
>;
type Args = SlackCommandMiddlewareArgs & AllMiddlewareArgs;

/** `/approve …`: the form, or one of the subcommands (help, status, list, link, unlink, templates). */
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
      case 'templates':
        return templatesSubcommand(deps, args);
      case 'report':
        return reportSubcommand(deps, args);
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

/** `/approve [title]`: acknowledges, then opens the form where the command was run. */
function approvalForm(deps: Deps) {
  return async ({ ack, command, client }: Args, title: string): Promise<void> => {
    await ack();
    await openApprovalForm(deps, client, {
      triggerId: command.trigger_id,
      userId: command.user_id,
      channelId: command.channel_id,
      title,
    });
  };
}

export function registerCommands(app: App, deps: Deps): void {
  app.command('/approve', approveCommand(deps));
}
