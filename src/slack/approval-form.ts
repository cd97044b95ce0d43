import { type Suggestion, suggestApproverFor } from '../approvals/approver-suggestion.ts';
import type { ApprovalModalState, ModalMetadata } from './blocks/approval-modal.ts';
import { escapeMrkdwn } from './blocks/request-message.ts';
import type { Messages } from './i18n.ts';
import { messagesFor } from './i18n.ts';
import type { SlackDeps } from './slack-deps.ts';

/** Where a form's request will go: a channel (and thread), or a channel the person picks. */
export interface FormPlace {
  /** The channel the form was opened from; empty when the person picks one (or gets the DM). */
  channelId: string;
  /** A message's thread the request is to join (a message shortcut). */
  threadTs?: string | undefined;
  /** Offer a channel picker (the global shortcut, opened from nowhere in particular). */
  pickChannel?: boolean | undefined;
}

/** The place as the form carries it to its submission. */
export function formPlace(place: FormPlace): Omit<ModalMetadata, 'locale'> {
  return {
    channelId: place.channelId,
    ...(place.threadTs ? { threadTs: place.threadTs } : {}),
    ...(place.pickChannel ? { pickChannel: true } : {}),
  };
}

/**
 * Fills the request form for a person: their language, their login, their department chain, and
 * the suggested approver, with one line saying why when there is no suggestion.
 */
export async function fillApprovalForm(
  deps: Pick<SlackDeps, 'people' | 'identities' | 'service'>,
  request: FormPlace & { userId: string; title: string; note?: string },
): Promise<{ state: ApprovalModalState; t: Messages }> {
  const person = await deps.people.get(request.userId);
  const t = messagesFor(person.locale);
  const metadata: ModalMetadata = { ...formPlace(request), locale: person.locale };
  const base = { title: request.title, note: request.note ?? '', metadata };
  const login = await deps.identities.loginOf(request.userId);
  if (!login) return { t, state: { ...base, info: [t.noEmail] } };
  metadata.requesterLogin = login;
  const suggestion = await suggestApproverFor(
    { service: deps.service, findChatUser: (leader) => deps.identities.slackUserOf(leader) },
    login,
  );
  const info = await describeSuggestion(deps, suggestion, login, t);
  if (suggestion.kind === 'suggested') {
    metadata.suggestion = { login: suggestion.approverLogin, slackId: suggestion.approverChatId };
    return { t, state: { ...base, info, approverSlackId: suggestion.approverChatId } };
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

async function describeSuggestion(
  deps: Pick<SlackDeps, 'people'>,
  s: Suggestion,
  login: string,
  t: Messages,
): Promise<string[]> {
  const chain =
    'chain' in s && s.chain.length > 0 ? [t.chain(escapeMrkdwn(s.chain.join(' › ')))] : [];
  switch (s.kind) {
    case 'suggested': {
      const name = (await deps.people.get(s.approverChatId)).name;
      return [...chain, t.suggested(escapeMrkdwn(name))];
    }
    case 'leader-not-in-chat':
      return [...chain, t.leaderNotOnSlack(escapeMrkdwn(s.approverLogin))];
    case 'no-leader':
      return [...chain, t.noLeader];
    case 'unknown-person':
      return [t.unknownPerson(escapeMrkdwn(login))];
    case 'lookup-failed':
      return [t.lookupFailed];
  }
}
