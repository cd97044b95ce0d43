import type { App } from '@slack/bolt';
import type { SlackDeps } from '../slack-deps.ts';
import { registerCommands } from './commands/approve-command.ts';
import { registerViews } from './views/approval-submission.ts';

export function registerListeners(app: App, deps: SlackDeps): void {
  registerCommands(app, deps);
  registerViews(app, deps);
}
