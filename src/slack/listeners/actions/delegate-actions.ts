import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { inForce } from '../../../approvals/delegation.ts';
import { localDateOf } from '../../../approvals/working-hours.ts';
import { logFailure } from '../../../logger.ts';
import { buildDelegateModal } from '../../blocks/delegate-modal.ts';
import { messagesFor } from '../../i18n.ts';
import { ACTION } from '../../ids.ts';
import { personWithin } from '../../people/slack-people.ts';
import type { SlackDeps } from '../../slack-deps.ts';

type Deps = Pick<SlackDeps, 'people' | 'identities' | 'delegations' | 'home' | 'logger' | 'now'>;
type Args = SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs;

/** How long opening the modal waits for who the person is (of the trigger's 3 s). */
const PERSON_WAIT_MS = 1000;

/**
 * App Home's "Set a delegate" / "Change": opens the modal, filled with the delegation in force.
 * Only the person's own delegation is read (their login, as everywhere), so the access policy has
 * nothing to decide here.
 */
export function openDelegate(deps: Deps) {
  return async ({ ack, body, client }: Args): Promise<void> => {
    await ack();
    const userId = body.user.id;
    // The trigger lives 3 s: the person (their language, and the zone their day back is read in)
    // is waited for briefly. Another replica, or a restart, has nobody cached yet.
    const person = await personWithin(deps.people, userId, PERSON_WAIT_MS);
    const t = messagesFor(person?.locale);
    const login = await deps.identities.loginOf(userId).catch(() => null);
    const current = login ? await deps.delegations.of(login).catch(() => undefined) : undefined;
    const active = current && inForce(current, deps.now()) ? current : undefined;
    const delegateChatId = active
      ? await deps.identities.slackUserOf(active.to).catch(() => null)
      : null;
    // Without their zone, no day rather than the wrong one (a day early east of UTC): Save would
    // keep it.
    const untilDate = active && person ? localDateOf(active.until, person.timeZone) : null;
    await client.views
      .open({
        trigger_id: (body as { trigger_id: string }).trigger_id,
        view: buildDelegateModal(t, { delegateChatId, untilDate }),
      })
      .catch((error: unknown) => {
        logFailure(deps.logger, error, { user: userId }, 'could not open the delegate modal');
      });
  };
}

/** App Home's "Clear": new requests go to the person again, at once. */
export function clearDelegate(deps: Deps) {
  return async ({ ack, body }: Args): Promise<void> => {
    await ack();
    const userId = body.user.id;
    try {
      const login = await deps.identities.loginOf(userId);
      if (login && (await deps.delegations.clear(login)))
        deps.logger.info({ user: userId }, 'delegate cleared');
    } catch (error) {
      logFailure(deps.logger, error, { user: userId }, 'could not clear the delegate');
    }
    await deps.home.publish(userId).catch((error: unknown) => {
      logFailure(deps.logger, error, { user: userId }, 'could not refresh the Home tab');
    });
  };
}

export function registerDelegateActions(app: App, deps: Deps): void {
  app.action({ type: 'block_actions', action_id: ACTION.delegateOpen }, openDelegate(deps));
  app.action({ type: 'block_actions', action_id: ACTION.delegateClear }, clearDelegate(deps));
}
