import type { AllMiddlewareArgs, SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { ModalView } from '@slack/types';
import { ApprovalServiceError } from '../../../approval-service/approval-service-error.ts';
import { partiesFromService, partiesOf } from '../../../approvals/access-policy.ts';
import { LINKING } from '../../../approvals/account-links.ts';
import { sameLogin } from '../../../approvals/person.ts';
import { placesOrNone } from '../../../approvals/step-places.ts';
import { logFailure } from '../../../logger.ts';
import { buildMessageModal } from '../../blocks/approval-modal.ts';
import { escapeMrkdwn, personRef } from '../../blocks/request-message.ts';
import {
  buildLinkModal,
  buildListMessage,
  buildStatusMessage,
  buildTextMessage,
} from '../../blocks/status-message.ts';
import { type Messages, messagesFor } from '../../i18n.ts';
import { visiblePage, visibleTo } from '../../people/access.ts';
import { localeWithin } from '../../people/slack-people.ts';
import type { SlackDeps } from '../../slack-deps.ts';
import { templateRefusal, templatesView } from '../../templates/template-manager.ts';
import { answerWithin } from '../answer-within.ts';

type Args = SlackCommandMiddlewareArgs & AllMiddlewareArgs;
type Deps = Pick<
  SlackDeps,
  | 'people'
  | 'identities'
  | 'links'
  | 'accountLinking'
  | 'service'
  | 'store'
  | 'logger'
  | 'access'
  | 'templates'
  | 'now'
> &
  Partial<Pick<SlackDeps, 'chains'>>;

const DJBH = /^[a-zA-Z0-9.\-_@]+$/;

/** How many of someone's open requests `/approve list` reads (it shows the first of them). */
const OPEN_REQUESTS_READ = 100;

async function language(deps: Pick<SlackDeps, 'people'>, userId: string) {
  return messagesFor((await deps.people.get(userId)).locale);
}

async function reply(args: Args, message: { text: string; blocks: unknown[] }): Promise<void> {
  await args.respond({
    response_type: 'ephemeral',
    text: message.text,
    blocks: message.blocks as never,
  });
}

/** How long help waits for the person's locale (users.info) before answering in English. */
const HELP_LOCALE_WAIT_MS = 1000;

/**
 * `/approve help`: answered in the acknowledgement itself, visible only to the person, in their
 * language. Help is often someone's first command, so the locale is looked up (users.info, once
 * per person) rather than taken only from the cache the other commands fill; the wait is bounded
 * well inside Slack's 3 s so a slow Slack costs the language, never the answer.
 */
export async function helpSubcommand(deps: Deps, args: Args): Promise<void> {
  const locale = await localeWithin(deps.people, args.command.user_id, HELP_LOCALE_WAIT_MS);
  await args.ack({
    response_type: 'ephemeral',
    text: messagesFor(locale).help(deps.accountLinking),
  });
}

/**
 * `/approve status <djbh>`: asks the service now. Details go only to those the access policy lets
 * see the approval; anyone else gets the answer an unknown number gets, word for word. The
 * service is asked first, whoever asks, so a refusal looks the same for every number too.
 */
export async function statusSubcommand(deps: Deps, args: Args, djbh: string): Promise<void> {
  await args.ack();
  const userId = args.command.user_id;
  const t = await language(deps, userId);
  if (!djbh) return reply(args, buildTextMessage(t.statusMissing));
  if (!DJBH.test(djbh)) return reply(args, buildTextMessage(t.statusInvalid(escapeMrkdwn(djbh))));
  try {
    const status = await deps.service.getStatus(djbh);
    if (status.unknown) return reply(args, buildTextMessage(t.statusUnknown(djbh)));
    const tracked = await deps.store.getApproval(djbh);
    // An approval the app did not start: only its approver, as the service names them, may see it.
    // The approver shown is the service's current one, so they may see it too.
    const parties = tracked
      ? partiesOf(tracked, status.approver)
      : partiesFromService(status.approver);
    // `unsure` (Slack could not list the channel's members) is answered like `denied`: the
    // requester and the approver never need the list, and for anyone else a different answer
    // would tell that the number exists.
    const verdict = await deps.access.check('see', parties, userId);
    if (verdict !== 'allowed') return reply(args, buildTextMessage(t.statusUnknown(djbh)));
    const approver = await approverRef(deps, status.approver ?? tracked?.parties.approver.login);
    let link: string | undefined;
    if (tracked?.slack.messageTs) {
      link = await args.client.chat
        .getPermalink({ channel: tracked.slack.channelId, message_ts: tracked.slack.messageTs })
        .then(
          (r) => r.permalink,
          () => undefined,
        );
    }
    // A step of a request in several steps: which one (steps.ts).
    const chain = tracked ? await deps.chains?.ofApproval(djbh).catch(() => undefined) : undefined;
    const position = chain?.steps.find((s) => s.djbh === djbh)?.position;
    const step = position && chain ? { position, steps: chain.steps.length } : undefined;
    return reply(
      args,
      buildStatusMessage(djbh, status.decision, { tracked, approver, link, step }, t),
    );
  } catch (error) {
    logFailure(deps.logger, error, { djbh }, 'status subcommand failed');
    const text =
      error instanceof ApprovalServiceError && error.kind !== 'unavailable' && error.serviceMessage
        ? t.serviceRejectedNow(escapeMrkdwn(error.serviceMessage))
        : t.serviceUnavailableNow;
    return reply(args, buildTextMessage(text));
  }
}

/** The approver as a mention when they are on Slack now (the identities say who), else their login. */
async function approverRef(
  deps: Pick<Deps, 'identities'>,
  login: string | undefined,
): Promise<string | undefined> {
  if (!login) return undefined;
  const slackId = await deps.identities.slackUserOf(login).catch(() => null);
  return personRef(slackId, login);
}

/**
 * `/approve list`: my open requests and what waits for me, from the app's own records, each
 * passed through the access policy like every other surface.
 */
export async function listSubcommand(deps: Deps, args: Args): Promise<void> {
  await args.ack();
  const userId = args.command.user_id;
  const t = await language(deps, userId);
  const login = await deps.identities.loginOf(userId);
  if (!login) return reply(args, buildTextMessage(t.noLogin(deps.accountLinking)));
  // Open ones only, found among all of them: a heavy requester's closed ones are newer.
  const open = await visibleTo(
    deps.access,
    userId,
    (await deps.store.openRequestsBy(login, OPEN_REQUESTS_READ)).approvals,
  );
  const waiting = await visiblePage(deps.access, userId, await deps.store.waitingFor(login, 10));
  const places = await placesOrNone(deps.chains, [...open, ...waiting.approvals]);
  return reply(args, buildListMessage(open, waiting, t, { login, now: deps.now() }, places));
}

/**
 * `/approve link`: the form that takes a session token of the service's web UI, where people may
 * link themselves (ACCOUNT_LINKING=self); otherwise what to do instead, with the login the app
 * uses now: send an admin their member id and login (`admin`), or ask the operators (`off`).
 */
export async function linkSubcommand(deps: Deps, args: Args): Promise<void> {
  await args.ack();
  const userId = args.command.user_id;
  if (!LINKING[deps.accountLinking].selfService) {
    const t = await language(deps, userId);
    const login = await deps.identities.loginOf(userId).catch(() => null);
    const shown = login ? escapeMrkdwn(login) : null;
    if (deps.accountLinking === 'off') return reply(args, buildTextMessage(t.linkingOff(shown)));
    // Say where the login comes from: an admin's link is not "your Slack e-mail".
    const linked = await deps.links.get(userId).catch(() => undefined);
    const byLink = linked !== undefined && login !== null && sameLogin(linked.login, login);
    return reply(
      args,
      buildTextMessage(t.linkByAdmin(userId, shown === null ? null : { login: shown, byLink })),
    );
  }
  // The trigger lives 3 s: open first, in the language we already know (English otherwise).
  const t = messagesFor(deps.people.cached(args.command.user_id)?.locale);
  await args.client.views
    .open({ trigger_id: args.command.trigger_id, view: buildLinkModal(t) })
    .catch((error: unknown) => {
      logFailure(
        deps.logger,
        error,
        { user: args.command.user_id },
        'could not open the link form',
      );
    });
}

/**
 * `/approve unlink`: forget the link; the Slack e-mail is the login again. Only where people link
 * themselves: an admin's link is removed by an admin.
 */
export async function unlinkSubcommand(deps: Deps, args: Args): Promise<void> {
  await args.ack();
  const t = await language(deps, args.command.user_id);
  if (deps.accountLinking === 'admin') return reply(args, buildTextMessage(t.unlinkByAdmin));
  if (deps.accountLinking === 'off') {
    const login = await deps.identities.loginOf(args.command.user_id).catch(() => null);
    return reply(args, buildTextMessage(t.linkingOff(login ? escapeMrkdwn(login) : null)));
  }
  const removed = await deps.links.unlink(args.command.user_id);
  return reply(args, buildTextMessage(removed ? t.unlinked : t.nothingToUnlink));
}

/**
 * How long `/approve templates` waits for the membership check before opening anything: a refusal
 * within it is a line only the person sees, and nothing opens; past it the modal opens (the
 * trigger lives 3 s) saying it is checking, and the answer replaces it.
 */
const TEMPLATES_CHECK_WAIT_MS = 1500;

/**
 * `/approve templates`: the templates of the channel it is run in, for its members (the access
 * policy's `manage-templates`); in a DM, a channel the app is not in, or for someone not in the
 * channel, a line saying why, only to them.
 */
export async function templatesSubcommand(deps: Deps, args: Args): Promise<void> {
  await args.ack();
  const { user_id: userId, channel_id: channelId, trigger_id: triggerId } = args.command;
  type Prepared = { t: Messages; refusal?: string; view?: ModalView };
  const prepare = async (): Promise<Prepared> => {
    const [verdict, person] = await Promise.all([
      deps.access.templates(channelId, userId, args.context.botUserId),
      deps.people.get(userId),
    ]);
    const t = messagesFor(person.locale);
    if (verdict !== 'allowed')
      return { t, refusal: templateRefusal(verdict, channelId, t, deps.access.templateManagers) };
    return { t, view: await templatesView(deps, channelId, userId) };
  };
  // A failure (the database, Slack) still gets words: the modal, or the "Checking…" it replaces,
  // says so instead of waiting forever.
  const preparing = prepare().catch((error: unknown): Prepared => {
    logFailure(deps.logger, error, { user: userId }, 'could not prepare the templates modal');
    const t = messagesFor(deps.people.cached(userId)?.locale);
    return { t, view: buildMessageModal([t.templatesFailed], t, t.templatesTitle) };
  });
  const open = (view: ModalView) =>
    args.client.views.open({ trigger_id: triggerId, view }).catch((error: unknown) => {
      logFailure(deps.logger, error, { user: userId }, 'could not open the templates modal');
      return undefined;
    });
  // Past the wait the modal opens saying it is checking (the trigger lives 3 s).
  const answered = await answerWithin(preparing, TEMPLATES_CHECK_WAIT_MS, () => {
    const t = messagesFor(deps.people.cached(userId)?.locale);
    return open(buildMessageModal([t.templatesChecking], t, t.templatesTitle));
  });
  const { value } = answered;
  if (!answered.late) {
    if (value.refusal) return reply(args, buildTextMessage(value.refusal));
    if (value.view) await open(value.view);
    return;
  }
  const opened = answered.interim?.view;
  if (!opened?.id) return;
  await args.client.views
    .update({
      view_id: opened.id,
      ...(opened.hash ? { hash: opened.hash } : {}),
      view: value.view ?? buildMessageModal([value.refusal ?? ''], value.t, value.t.templatesTitle),
    })
    .catch((error: unknown) =>
      logFailure(deps.logger, error, { user: userId }, 'could not fill the templates modal in'),
    );
}
