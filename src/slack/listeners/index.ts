import type { App } from '@slack/bolt';
import type { SlackDeps } from '../slack-deps.ts';
import { registerApproverPick } from './actions/approver-pick.ts';
import { registerDelegateActions } from './actions/delegate-actions.ts';
import { registerLinkFollowed } from './actions/link-followed.ts';
import { registerRequestAgain } from './actions/request-again.ts';
import { registerConfirmationActions } from './actions/step-confirmation-actions.ts';
import { registerTemplateActions } from './actions/template-actions.ts';
import { registerTemplatePick } from './actions/template-pick.ts';
import { registerCommands } from './commands/approve-command.ts';
import { registerEvents } from './events/app-home-opened.ts';
import { registerMembershipEvents } from './events/membership-changed.ts';
import { registerFunctions } from './functions/request-approval-step.ts';
import { registerShortcuts } from './shortcuts/request-shortcuts.ts';
import { registerViews } from './views/approval-submission.ts';
import { registerDelegateView } from './views/delegate-submission.ts';
import { registerLinkView } from './views/link-submission.ts';
import { registerConfirmationModal } from './views/step-confirmation-modal.ts';
import { registerTemplateView } from './views/template-submission.ts';

export function registerListeners(app: App, deps: SlackDeps): void {
  registerCommands(app, deps);
  registerViews(app, deps);
  registerLinkView(app, deps);
  registerEvents(app, deps);
  registerMembershipEvents(app, deps);
  registerShortcuts(app, deps);
  registerFunctions(app, deps);
  registerConfirmationActions(app, deps);
  registerApproverPick(app, deps);
  registerRequestAgain(app, deps);
  registerConfirmationModal(app, deps);
  registerTemplateActions(app, deps);
  registerTemplatePick(app, deps);
  registerTemplateView(app, deps);
  registerLinkFollowed(app, deps);
  registerDelegateActions(app, deps);
  registerDelegateView(app, deps);
}
