import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { approverWentToDecide } from '../../../approvals/check-schedule.ts';
import { describe } from '../../../errors.ts';
import { ACTION } from '../../ids.ts';
import type { SlackDeps } from '../../slack-deps.ts';

type Deps = Pick<SlackDeps, 'identities' | 'store' | 'logger' | 'now'>;
type Args = SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs;

/**
 * A link button was pressed. Slack opens its URL in the browser and sends the app the click;
 * nothing is shown. A link to the approval service means the person is going to decide: the
 * approvals waiting for them are checked every few seconds for a while (check-schedule.ts's HOT),
 * so their decision reaches its thread within seconds. Only the clicker's own approvals are
 * touched (their login, as everywhere), so the access policy has nothing to decide here.
 */
export function linkFollowed(deps: Deps) {
  return async ({ ack, body, action }: Args): Promise<void> => {
    await ack();
    if (!('action_id' in action) || !action.action_id.startsWith(ACTION.openInService)) return;
    try {
      const login = await deps.identities.loginOf(body.user.id);
      if (!login) return;
      const marked = await approverWentToDecide(deps, login);
      if (marked > 0) deps.logger.debug({ user: body.user.id, marked }, 'approver went to decide');
    } catch (error) {
      // Advice to the schedule only: the regular checks still see the decision.
      deps.logger.warn({ error: describe(error), user: body.user.id }, 'could not mark checks hot');
    }
  };
}

export function registerLinkFollowed(app: App, deps: Deps): void {
  app.action(new RegExp(`^(${ACTION.openInService}|${ACTION.viewThread})`), linkFollowed(deps));
}
