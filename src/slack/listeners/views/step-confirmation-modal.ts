import type {
  AllMiddlewareArgs,
  App,
  SlackViewMiddlewareArgs,
  ViewClosedAction,
  ViewSubmitAction,
} from '@slack/bolt';
import { describe } from '../../../errors.ts';
import { logFailure } from '../../../logger.ts';
import { messagesFor } from '../../i18n.ts';
import { CALLBACK } from '../../ids.ts';
import { answerAs, type ConfirmationDeps } from '../actions/step-confirmation-actions.ts';

type Args = SlackViewMiddlewareArgs<ViewSubmitAction | ViewClosedAction> & AllMiddlewareArgs;

/**
 * The modal a workflow step opened for a requester who ran it themselves: Start (its submit)
 * starts the approval, Cancel or closing it ends the step. The same rule as the DM's buttons:
 * only the requester's own answer counts, and it is taken once.
 */
export function confirmationModalAnswer(deps: ConfirmationDeps, answer: 'start' | 'cancel') {
  return async ({ ack, body, view, client }: Args): Promise<void> => {
    // Closes the modal; starting may take longer than Slack waits.
    await ack();
    const userId = body.user.id;
    const executionId = view.private_metadata;
    const t = messagesFor((await deps.people.get(userId).catch(() => undefined))?.locale);
    // A modal has no response_url: what the person must be told goes to their DM with the app.
    const tell = (text: string) =>
      client.chat.postMessage({ channel: userId, text }).catch((error: unknown) => {
        deps.logger.warn({ error: describe(error), executionId }, 'could not tell the requester');
      });
    try {
      await answerAs(deps, answer, executionId, userId, tell, t);
    } catch (error) {
      logFailure(deps.logger, error, { executionId, user: userId }, 'confirmation answer failed');
      await tell(t.somethingWrong);
    }
  };
}

export function registerConfirmationModal(app: App, deps: ConfirmationDeps): void {
  app.view<ViewSubmitAction>(
    { callback_id: CALLBACK.confirmModal, type: 'view_submission' },
    confirmationModalAnswer(deps, 'start'),
  );
  app.view<ViewClosedAction>(
    { callback_id: CALLBACK.confirmModal, type: 'view_closed' },
    confirmationModalAnswer(deps, 'cancel'),
  );
}
