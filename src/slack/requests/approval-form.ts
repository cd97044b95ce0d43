import {
  availableAbove,
  type DelegatedBy,
  type Suggestion,
  suggestApproverFor,
} from '../../approvals/approver-suggestion.ts';
import { type Away, awayOf } from '../../approvals/away-rule.ts';
import { delegateFor, knownDelegate } from '../../approvals/delegation.ts';
import type { RequestTemplate } from '../../approvals/request-templates.ts';
import type {
  ApprovalModalState,
  ModalMetadata,
  TemplateOption,
} from '../blocks/approval-modal.ts';
import { escapeMrkdwn } from '../blocks/request-message.ts';
import type { Messages } from '../i18n.ts';
import { messagesFor } from '../i18n.ts';
import { isDirectMessage, isUserId } from '../ids.ts';
import type { SlackDeps } from '../slack-deps.ts';

/** Where a form's request will go: a channel (and thread), or a channel the person picks. */
export interface FormPlace {
  /** The channel the form was opened from; empty when the person picks one (or gets the DM). */
  channelId: string;
  /** A message's thread the request is to join (a message shortcut). */
  threadTs?: string | undefined;
  /** Offer a channel picker (the global shortcut, opened from nowhere in particular). */
  pickChannel?: boolean | undefined;
  /** The approval this form requests again, linked from the new request message. */
  againOf?: { djbh: string; link: string | null } | undefined;
}

/** The place as the form carries it to its submission. */
export function formPlace(place: FormPlace): Omit<ModalMetadata, 'locale'> {
  return {
    channelId: place.channelId,
    ...(place.threadTs ? { threadTs: place.threadTs } : {}),
    ...(place.pickChannel ? { pickChannel: true } : {}),
    ...(place.againOf ? { againOf: place.againOf } : {}),
  };
}

/**
 * Fills the request form for a person: their language, their login, their department chain, and
 * the suggested approver, with one line saying why when there is no suggestion.
 */
export async function fillApprovalForm(
  deps: Pick<
    SlackDeps,
    'people' | 'identities' | 'service' | 'now' | 'templates' | 'access' | 'delegations'
  >,
  request: FormPlace & {
    userId: string;
    title: string;
    note?: string;
    /**
     * The template the form comes filled from (Request again: the one that started the old
     * request). Applied only when the form offers it (the channel's, not removed, one of its
     * members): picked in the picker, and its default approver proposed, with the away check.
     */
    templateId?: string | undefined;
  },
): Promise<{ state: ApprovalModalState; t: Messages }> {
  // The templates (and the membership check behind them) are looked up beside the person.
  const offered = templateOptions(deps, request.channelId, request.userId);
  const person = await deps.people.get(request.userId);
  const t = messagesFor(person.locale);
  const metadata: ModalMetadata = { ...formPlace(request), locale: person.locale, filled: true };
  const templates = await offered;
  const base: Pick<
    ApprovalModalState,
    'title' | 'note' | 'metadata' | 'templates' | 'templateNotice'
  > = {
    title: request.title,
    note: request.note ?? '',
    metadata,
    templates,
  };
  const login = await deps.identities.loginOf(request.userId);
  if (!login) return { t, state: { ...base, info: [t.noEmail] } };
  metadata.requesterLogin = login;
  const suggestion = await suggestApproverFor(suggestionDeps(deps), login);
  const template = request.templateId
    ? await filledTemplate(deps, templates, request.templateId)
    : undefined;
  if (template) {
    metadata.templateId = template.id;
    const templateNotice = [t.templateApplied(escapeMrkdwn(template.name))];
    if (template.approverChatId) {
      // The template's approver (or their delegate), not the org chart's: only the chain is said
      // about the latter.
      const chain =
        'chain' in suggestion && suggestion.chain.length > 0
          ? [t.chain(escapeMrkdwn(suggestion.chain.join(' › ')))]
          : [];
      const { approver, approverNotice } = await templateApprover(
        deps,
        request.userId,
        template.approverChatId,
        metadata,
        t,
      );
      return {
        t,
        state: {
          ...base,
          info: chain,
          approverSlackId: approver,
          approverNotice,
          templateNotice,
        },
      };
    }
    Object.assign(base, { templateNotice });
  }
  const info = await describeSuggestion(deps, suggestion, login, t, person.timeZone);
  if (suggestion.kind === 'suggested') {
    metadata.suggestion = { login: suggestion.approverLogin, slackId: suggestion.approverChatId };
    const approverNotice = await awayNotice(deps, suggestion, t, person.timeZone);
    return {
      t,
      state: { ...base, info, approverSlackId: suggestion.approverChatId, approverNotice },
    };
  }
  if (suggestion.kind === 'leader-not-in-chat') {
    const approverLogin = {
      value: suggestion.approverLogin,
      hint: t.approverLoginHint(suggestion.approverLogin),
    };
    return { t, state: { ...base, info, approverLogin } };
  }
  return { t, state: { ...base, info } };
}

/** The template `id`, when the form offers it (so the person may use it there), else none. */
async function filledTemplate(
  deps: Pick<SlackDeps, 'templates'>,
  offered: TemplateOption[],
  id: string,
): Promise<RequestTemplate | undefined> {
  if (!offered.some((o) => o.id === id)) return undefined;
  return deps.templates.get(id).catch(() => undefined);
}

/**
 * The templates the form offers `userId`: the channel's, when it was opened in a channel (a DM, or
 * the ⚡ menu's form that picks its channel later, has none) and they are one of its members
 * (WHO_MAY['use-templates']: a private channel's templates are not shown to someone who left it;
 * when Slack cannot say, none are offered). Templates are a convenience: when the database cannot
 * list them, the form is offered without.
 */
export async function templateOptions(
  deps: Pick<SlackDeps, 'templates' | 'access'>,
  channelId: string,
  userId: string,
): Promise<TemplateOption[]> {
  if (!channelId || isDirectMessage(channelId) || isUserId(channelId)) return [];
  const templates = await deps.templates.list(channelId).catch(() => []);
  // Slack is asked only when there is something to offer.
  if (templates.length === 0) return [];
  if ((await deps.access.useTemplates(channelId, userId)) !== 'allowed') return [];
  return templates.map((template) => ({ id: template.id, name: template.name }));
}

/** The suggestion's ports over Slack: who is on Slack, who is away now, and who delegated. */
export function suggestionDeps(
  deps: Pick<SlackDeps, 'people' | 'identities' | 'service' | 'now' | 'delegations'>,
) {
  return {
    service: deps.service,
    findChatUser: (login: string) => deps.identities.slackUserOf(login),
    awayOf: async (chatId: string) => awayOf((await deps.people.get(chatId)).presence, deps.now()),
    delegations: deps.delegations,
    now: deps.now,
  };
}

/**
 * The delegate of the chat user `approver` for a new request of `requesterLogin`, when they set
 * one the service still knows and it is on the chat; undefined otherwise (the approver stays).
 * Read when the request is made: a delegation is a login's, and the delegate's chat account is
 * who they are on Slack now.
 */
export async function delegateOf(
  deps: Pick<SlackDeps, 'identities' | 'delegations' | 'now' | 'service'>,
  approver: string,
  requesterLogin: string | null | (() => Promise<string | null>),
): Promise<{ chatId: string; from: string; until: Date } | undefined> {
  const now = deps.now();
  // Nobody away (the usual case): no one is looked up on Slack for it.
  const inForce = await deps.delegations.inForceAt(now).catch(() => []);
  if (inForce.length === 0) return undefined;
  const login = await deps.identities.loginOf(approver).catch(() => null);
  if (!login) return undefined;
  const requester = typeof requesterLogin === 'function' ? await requesterLogin() : requesterLogin;
  const delegated = await knownDelegate(
    deps.service,
    login,
    delegateFor(login, inForce, now, requester),
    requester,
  );
  const first = delegated.via[0];
  if (!first) return undefined;
  const chatId = await deps.identities.slackUserOf(delegated.approver).catch(() => null);
  return chatId ? { chatId, from: first.from, until: first.until } : undefined;
}

/**
 * A template's approver as the form proposes them: their delegate while they are away (said so,
 * before the chat-status rule), else them with what noticeFor says.
 */
export async function templateApprover(
  deps: Pick<SlackDeps, 'people' | 'identities' | 'service' | 'now' | 'delegations'>,
  requesterId: string,
  approver: string,
  metadata: { requesterLogin?: string },
  t: Messages,
): Promise<{ approver: string; approverNotice: string[] }> {
  const delegate = await delegateOf(deps, approver, metadata.requesterLogin ?? null);
  if (!delegate) {
    return {
      approver,
      approverNotice: await noticeFor(deps, requesterId, approver, metadata, t),
    };
  }
  const requester = await deps.people.get(requesterId);
  const line = await delegateLine(deps, approver, delegate.chatId, delegate.until, t, requester);
  return { approver: delegate.chatId, approverNotice: [line] };
}

/** "Maria is away until 3 Dec; their delegate is Alex", in the reader's words and time zone. */
async function delegateLine(
  deps: Pick<SlackDeps, 'people'>,
  fromChatId: string,
  delegateChatId: string,
  until: Date,
  t: Messages,
  reader: { timeZone?: string | undefined },
): Promise<string> {
  const [from, delegate] = await Promise.all([
    deps.people.get(fromChatId),
    deps.people.get(delegateChatId),
  ]);
  return t.delegatedTo(
    escapeMrkdwn(from.name),
    until,
    reader.timeZone,
    escapeMrkdwn(delegate.name),
  );
}

/**
 * What the form says under an approver picked (or proposed by a template): nothing when they are
 * there; that they are away, and who is next up their chain (if anyone), when they are not.
 */
export async function noticeFor(
  deps: Pick<SlackDeps, 'people' | 'identities' | 'service' | 'now' | 'delegations'>,
  requesterId: string,
  picked: string,
  metadata: { requesterLogin?: string },
  t: Messages,
): Promise<string[]> {
  const [person, requester] = await Promise.all([
    deps.people.get(picked),
    deps.people.get(requesterId),
  ]);
  // A delegate while away comes before the chat status: said, and the pick is theirs to keep.
  const delegate = await delegateOf(deps, picked, metadata.requesterLogin ?? null);
  if (delegate)
    return [await delegateLine(deps, picked, delegate.chatId, delegate.until, t, requester)];
  const away = awayOf(person.presence, deps.now());
  if (!away) return [];
  const line = await awayLine(deps, picked, away, t, requester.timeZone);
  const login = await deps.identities.loginOf(picked);
  if (!login) return [line];
  const besides = metadata.requesterLogin ? [metadata.requesterLogin] : [];
  const next = await availableAbove(suggestionDeps(deps), login, besides).catch(() => undefined);
  if (!next) return [line, t.nobodyAvailableAbove];
  const name = escapeMrkdwn((await deps.people.get(next.chatId)).name);
  return [line, t.nextLeaderUp(name)];
}

/** "Maria is away until 3 Dec: 🌴 Vacation", as the form says it beside the approver. */
export async function awayLine(
  deps: Pick<SlackDeps, 'people'>,
  chatId: string,
  away: Away,
  t: Messages,
  timeZone: string | undefined,
): Promise<string> {
  const name = escapeMrkdwn((await deps.people.get(chatId)).name);
  if (away.reason === 'deactivated') return t.deactivated(name);
  const status = [away.emoji, escapeMrkdwn(away.text)].filter(Boolean).join(' ');
  return t.awayUntil(name, away.until, timeZone, status);
}

/**
 * What the form says under the approver when the suggested one is a leader's delegate, or the
 * nearest leader, or the suggested one, is away.
 */
async function awayNotice(
  deps: Pick<SlackDeps, 'people' | 'identities'>,
  s: Extract<Suggestion, { kind: 'suggested' }>,
  t: Messages,
  timeZone: string | undefined,
): Promise<string[]> {
  if (s.delegatedBy) {
    const delegate = (await deps.people.get(s.approverChatId)).name;
    return [await delegatedByLine(deps, s.delegatedBy, escapeMrkdwn(delegate), t, timeZone)];
  }
  if (s.passedOver) {
    const { chatId, away } = s.passedOver;
    const next = escapeMrkdwn((await deps.people.get(s.approverChatId)).name);
    return [await awayLine(deps, chatId, away, t, timeZone), t.suggestedInstead(next)];
  }
  if (s.away) {
    return [await awayLine(deps, s.approverChatId, s.away, t, timeZone), t.nobodyAvailableAbove];
  }
  return [];
}

/** "Maria is away until 3 Dec; their delegate is …", naming whoever delegated as Slack knows them. */
async function delegatedByLine(
  deps: Pick<SlackDeps, 'people' | 'identities'>,
  by: DelegatedBy,
  delegate: string,
  t: Messages,
  timeZone: string | undefined,
): Promise<string> {
  const from = await deps.identities.slackUserOf(by.login).catch(() => null);
  const fromName = from ? (await deps.people.get(from)).name : by.login;
  return t.delegatedTo(escapeMrkdwn(fromName), by.until, timeZone, delegate);
}

async function describeSuggestion(
  deps: Pick<SlackDeps, 'people' | 'identities'>,
  s: Suggestion,
  login: string,
  t: Messages,
  timeZone?: string,
): Promise<string[]> {
  const chain =
    'chain' in s && s.chain.length > 0 ? [t.chain(escapeMrkdwn(s.chain.join(' › ')))] : [];
  switch (s.kind) {
    case 'suggested': {
      // Passed over for someone further up, or a leader's delegate: the line under the approver
      // says why.
      if (s.passedOver || s.delegatedBy) return chain;
      const name = (await deps.people.get(s.approverChatId)).name;
      return [...chain, t.suggested(escapeMrkdwn(name))];
    }
    case 'leader-not-in-chat':
      // A delegate not on Slack: whose delegate they are, and their login kept in the field.
      if (s.delegatedBy)
        return [
          ...chain,
          await delegatedByLine(deps, s.delegatedBy, escapeMrkdwn(s.approverLogin), t, timeZone),
        ];
      return [...chain, t.leaderNotOnSlack(escapeMrkdwn(s.approverLogin))];
    case 'no-leader':
      return [...chain, t.noLeader];
    case 'unknown-person':
      return [t.unknownPerson(escapeMrkdwn(login))];
    case 'lookup-failed':
      return [t.lookupFailed];
  }
}
