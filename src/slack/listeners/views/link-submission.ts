import type {
  AllMiddlewareArgs,
  App,
  SlackViewMiddlewareArgs,
  ViewSubmitAction,
} from '@slack/bolt';
import { ApprovalServiceError } from '../../../approval-service/approval-service-error.ts';
import { LINKING } from '../../../approvals/account-links.ts';
import { logFailure } from '../../../logger.ts';
import { buildMessageModal } from '../../blocks/approval-modal.ts';
import { escapeMrkdwn } from '../../blocks/request-message.ts';
import { buildLinkModal } from '../../blocks/status-message.ts';
import { type Messages, messagesFor } from '../../i18n.ts';
import { ACTION, BLOCK, CALLBACK } from '../../ids.ts';
import { teamIdOf } from '../../people/team-of.ts';
import type { SlackDeps } from '../../slack-deps.ts';

type Deps = Pick<SlackDeps, 'people' | 'links' | 'accountLinking' | 'service' | 'logger' | 'now'>;
type Args = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

/**
 * The link form: asks the service whose session the token is, and links that login to the Slack
 * user. The token is used for that one call: never stored, logged or shown again.
 */
export function linkSubmission(deps: Deps) {
  return async ({ ack, body, view, client }: Args): Promise<void> => {
    // Slack waits 3 s for this answer: given in the language already known (English otherwise),
    // before any call; the person is looked up afterwards, for the result.
    const known = messagesFor(deps.people.cached(body.user.id)?.locale);
    // A form opened before ACCOUNT_LINKING changed: nothing is linked, and nothing is asked.
    if (!LINKING[deps.accountLinking].selfService) {
      await ack({
        response_action: 'update',
        view: buildMessageModal(
          [
            deps.accountLinking === 'admin'
              ? known.linkByAdmin(body.user.id, null)
              : known.linkingOff(null),
          ],
          known,
          known.linkTitle,
        ),
      });
      return;
    }
    const token = view.state.values[BLOCK.sessionToken]?.[ACTION.sessionToken]?.value?.trim() ?? '';
    if (!token) {
      await ack({ response_action: 'errors', errors: { [BLOCK.sessionToken]: known.linkEmpty } });
      return;
    }
    await ack({
      response_action: 'update',
      view: buildMessageModal([known.linkChecking], known, known.linkTitle),
    });
    const person = await deps.people.get(body.user.id).catch(() => undefined);
    const t = person ? messagesFor(person.locale) : known;
    let modal: ReturnType<typeof buildMessageModal>;
    try {
      const profile = await deps.service.getProfile(token);
      const outcome = await deps.links.link({
        slackUserId: body.user.id,
        teamId: teamIdOf(body),
        login: profile.login,
        name: profile.name,
        linkedAt: deps.now(),
      });
      if (outcome.linked) {
        deps.logger.info({ user: body.user.id, login: profile.login }, 'account linked');
        modal = buildMessageModal([t.linked(profile.name, profile.login)], t, t.linkTitle);
      } else {
        // Whoever holds the login is not named: the person proved the login, not who else has it.
        deps.logger.warn(
          { user: body.user.id, login: profile.login, linkedTo: outcome.takenBy.slackUserId },
          'account not linked: the login is linked to another Slack user',
        );
        modal = buildMessageModal([t.linkTaken(escapeMrkdwn(profile.login))], t, t.linkTitle);
      }
    } catch (error) {
      logFailure(deps.logger, error, { user: body.user.id }, 'account not linked');
      modal = buildLinkModal(t, why(error, t));
    }
    await client.views.update({ view_id: view.id, view: modal }).catch((error: unknown) => {
      logFailure(deps.logger, error, { view: view.id }, 'could not update the link form');
    });
  };
}

function why(error: unknown, t: Messages): string {
  if (!(error instanceof ApprovalServiceError)) return t.somethingWrong;
  if (error.kind === 'unavailable') return t.serviceDown;
  if (error.serviceCode === 10000) return t.linkNotLoggedIn;
  return t.linkSsoError(escapeMrkdwn(error.serviceMessage || error.message));
}

export function registerLinkView(app: App, deps: Deps): void {
  app.view(CALLBACK.linkModal, linkSubmission(deps));
}
