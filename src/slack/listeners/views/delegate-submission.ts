import type {
  AllMiddlewareArgs,
  App,
  SlackViewMiddlewareArgs,
  ViewSubmitAction,
} from '@slack/bolt';
import { checkDelegation, type DelegationProblem } from '../../../approvals/delegation.ts';
import { startOfLocalDate } from '../../../approvals/working-hours.ts';
import { logFailure } from '../../../logger.ts';
import { escapeMrkdwn } from '../../blocks/request-message.ts';
import { type Messages, messagesFor } from '../../i18n.ts';
import { ACTION, BLOCK, CALLBACK } from '../../ids.ts';
import type { SlackDeps } from '../../slack-deps.ts';

type Deps = Pick<
  SlackDeps,
  'people' | 'identities' | 'delegations' | 'service' | 'home' | 'logger' | 'now'
>;
type Args = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;
type Values = Record<
  string,
  Record<string, { selected_user?: string | null; selected_date?: string | null } | undefined>
>;

/**
 * The delegate modal's Save: the chosen Slack user is found as a service login through the
 * identities, and the delegation is from login to login. Refused, beside the field, in the
 * person's words: themself, an app or a deactivated account, a day that is not after today or more than a year ahead, someone without a login, or someone
 * the service's directory does not know (checkDelegation).
 */
export function delegateSubmission(deps: Deps) {
  return async ({ ack, body, view }: Args): Promise<void> => {
    const userId = body.user.id;
    const person = await deps.people.get(userId).catch(() => undefined);
    const t = messagesFor(person?.locale);
    const values = view.state.values as Values;
    const chosen = values[BLOCK.delegateTo]?.[ACTION.delegateTo]?.selected_user ?? null;
    const date = values[BLOCK.delegateUntil]?.[ACTION.delegateUntil]?.selected_date ?? '';
    const refuse = (block: string, text: string) =>
      ack({ response_action: 'errors', errors: { [block]: text } });
    const from = await deps.identities.loginOf(userId).catch(() => null);
    if (!from) return refuse(BLOCK.delegateTo, t.delegateNoOwnLogin);
    const until = startOfLocalDate(date, person?.timeZone);
    if (!until) return refuse(BLOCK.delegateUntil, t.delegatePast);
    // Someone a request can reach on Slack, as for a template's approver: not an app, and not a
    // deactivated account (which the service's directory may still know).
    const picked = chosen ? await deps.people.get(chosen).catch(() => undefined) : undefined;
    if (picked?.isBot) return refuse(BLOCK.delegateTo, t.approverIsBot);
    if (picked?.presence.deactivated)
      return refuse(BLOCK.delegateTo, t.delegateDeactivated(escapeMrkdwn(picked.name)));
    const to = chosen ? await deps.identities.loginOf(chosen).catch(() => null) : null;
    const now = deps.now();
    const problem = await checkDelegation(deps.service, { from, to, until }, now);
    if (problem) {
      const [block, text] = words(problem, escapeMrkdwn(picked?.name || to || ''), t);
      return refuse(block, text);
    }
    try {
      await deps.delegations.set({ from, to: to as string, until, setAt: now });
    } catch (error) {
      logFailure(deps.logger, error, { user: userId }, 'could not save the delegate');
      return refuse(BLOCK.delegateTo, t.delegateCouldNotSave);
    }
    await ack();
    deps.logger.info({ user: userId, until: until.toISOString() }, 'delegate set');
    await deps.home.publish(userId).catch((error: unknown) => {
      logFailure(deps.logger, error, { user: userId }, 'could not refresh the Home tab');
    });
  };
}

function words(problem: DelegationProblem, name: string, t: Messages): [string, string] {
  switch (problem) {
    case 'yourself':
      return [BLOCK.delegateTo, t.delegateYourself];
    case 'past':
      return [BLOCK.delegateUntil, t.delegatePast];
    case 'too-far':
      return [BLOCK.delegateUntil, t.delegateTooFar];
    case 'no-login':
      return [BLOCK.delegateTo, t.delegateNoLogin(name)];
    case 'unknown-delegate':
      return [BLOCK.delegateTo, t.delegateUnknown(name)];
    case 'service-unreachable':
      return [BLOCK.delegateTo, t.delegateServiceDown];
  }
}

export function registerDelegateView(app: App, deps: Deps): void {
  app.view(CALLBACK.delegateModal, delegateSubmission(deps));
}
