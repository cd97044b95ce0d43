import type {
  AllMiddlewareArgs,
  App,
  SlackViewMiddlewareArgs,
  ViewSubmitAction,
} from '@slack/bolt';
import {
  checkDelegation,
  type Delegation,
  type DelegationProblem,
} from '../../../approvals/delegation.ts';
import { startOfLocalDate } from '../../../approvals/working-hours.ts';
import { logFailure } from '../../../logger.ts';
import { settleWithin } from '../../../settle-within.ts';
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
 * How long Save waits for its checks (who the person and their pick are on Slack, whether the
 * service's directory knows the pick) before answering: Slack waits 3 s, and past the app's own
 * safety net (acknowledged-dispatch.ts) the modal would close as if saved, with nothing said.
 */
export const DELEGATE_CHECK_WAIT_MS = 2000;

/**
 * The delegate modal's Save: the chosen Slack user is found as a service login through the
 * identities, and the delegation is from login to login. Refused, beside the field, in the
 * person's words: themself, an app or a deactivated account, a day that is not after today or
 * more than a year ahead, someone without a login, or someone the service's directory does not
 * know (checkDelegation); checks that take too long ask for another press, nothing saved (their
 * answers are cached, so the next one is quick).
 */
export function delegateSubmission(deps: Deps) {
  return async ({ ack, body, view }: Args): Promise<void> => {
    const userId = body.user.id;
    const values = view.state.values as Values;
    const chosen = values[BLOCK.delegateTo]?.[ACTION.delegateTo]?.selected_user ?? null;
    const date = values[BLOCK.delegateUntil]?.[ACTION.delegateUntil]?.selected_date ?? '';
    const refuse = ([block, text]: [string, string]) =>
      ack({ response_action: 'errors', errors: { [block]: text } });
    const checked = await settleWithin(
      checkSave(deps, userId, chosen, date),
      DELEGATE_CHECK_WAIT_MS,
    );
    if (!checked) {
      const t = messagesFor(deps.people.cached(userId)?.locale);
      return refuse([BLOCK.delegateTo, t.delegateStillChecking]);
    }
    if ('refusal' in checked) return refuse(checked.refusal);
    const { delegation, t } = checked;
    try {
      await deps.delegations.set(delegation);
    } catch (error) {
      logFailure(deps.logger, error, { user: userId }, 'could not save the delegate');
      return refuse([BLOCK.delegateTo, t.delegateCouldNotSave]);
    }
    await ack();
    deps.logger.info({ user: userId, until: delegation.until.toISOString() }, 'delegate set');
    await deps.home.publish(userId).catch((error: unknown) => {
      logFailure(deps.logger, error, { user: userId }, 'could not refresh the Home tab');
    });
  };
}

/** What Save would store, or why not (the field and the words), in the person's language. */
async function checkSave(
  deps: Deps,
  userId: string,
  chosen: string | null,
  date: string,
): Promise<{ t: Messages } & ({ delegation: Delegation } | { refusal: [string, string] })> {
  const person = await deps.people.get(userId).catch(() => undefined);
  const t = messagesFor(person?.locale);
  const no = (block: string, text: string) => ({ t, refusal: [block, text] as [string, string] });
  const from = await deps.identities.loginOf(userId).catch(() => null);
  if (!from) return no(BLOCK.delegateTo, t.delegateNoOwnLogin);
  const until = startOfLocalDate(date, person?.timeZone);
  if (!until) return no(BLOCK.delegateUntil, t.delegatePast);
  // Someone a request can reach on Slack, as for a template's approver: not an app, and not a
  // deactivated account (which the service's directory may still know).
  const picked = chosen ? await deps.people.get(chosen).catch(() => undefined) : undefined;
  if (picked?.isBot) return no(BLOCK.delegateTo, t.approverIsBot);
  if (picked?.presence.deactivated)
    return no(BLOCK.delegateTo, t.delegateDeactivated(escapeMrkdwn(picked.name)));
  const to = chosen ? await deps.identities.loginOf(chosen).catch(() => null) : null;
  const now = deps.now();
  const problem = await checkDelegation(deps.service, { from, to, until }, now);
  if (problem) return no(...words(problem, escapeMrkdwn(picked?.name || to || ''), t));
  return { t, delegation: { from, to: to as string, until, setAt: now } };
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
