import type {
  AllMiddlewareArgs,
  App,
  BlockAction,
  ButtonAction,
  SlackActionMiddlewareArgs,
} from '@slack/bolt';
import { partiesOf } from '../../../approvals/access-policy.ts';
import { messagesFor } from '../../i18n.ts';
import { ACTION } from '../../ids.ts';
import type { SlackDeps } from '../../slack-deps.ts';

type Deps = Pick<
  SlackDeps,
  'people' | 'logger' | 'now' | 'store' | 'access' | 'chains' | 'dispatcher'
>;
type Args = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;

/**
 * "Start step n" under a step whose start may or may not exist in the service (steps.ts): the
 * requester looked and found none, so the step is due again and the next pass starts it. Only
 * the requester (the access policy's `confirm-start`: starting an approval in their name); once
 * only (a step no longer uncertain is not made due again).
 */
export function startStep(deps: Deps) {
  return async ({ ack, body, action, respond }: Args): Promise<void> => {
    await ack();
    const t = messagesFor(deps.people.cached(body.user.id)?.locale);
    const tell = (text: string) =>
      respond({ response_type: 'ephemeral', replace_original: false, text }).catch(() => undefined);
    const [djbh = '', position = ''] = (action.value ?? '').split(':');
    const anchor = await deps.store.getApproval(djbh).catch(() => undefined);
    const found = anchor ? await deps.chains.ofApproval(djbh).catch(() => undefined) : undefined;
    if (!anchor || !found) return void (await tell(t.againUnknown));
    const verdict = await deps.access.check('confirm-start', partiesOf(anchor), body.user.id);
    if (verdict !== 'allowed') return void (await tell(t.onlyRequesterStartsStep));
    const again = await deps.chains.startAgain(found.chain.id, Number(position), deps.now());
    deps.logger.info(
      { chain: found.chain.id, step: Number(position), again },
      'step started again',
    );
    await tell(again ? t.stepStartsAgain(Number(position)) : t.stepNotUncertain(Number(position)));
  };
}

export function registerStartStep(app: App, deps: Deps): void {
  app.action<BlockAction<ButtonAction>>(
    { type: 'block_actions', action_id: ACTION.startStep },
    startStep(deps),
  );
}
