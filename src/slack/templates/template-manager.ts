import type { ModalView } from '@slack/types';
import type { TemplateManagers, TemplatePlaceVerdict } from '../../approvals/access-policy.ts';
import { buildTemplatesModal, HISTORY_SHOWN } from '../blocks/templates-modal.ts';
import { type Messages, messagesFor } from '../i18n.ts';
import { personWithin } from '../people/slack-people.ts';
import type { SlackDeps } from '../slack-deps.ts';

type Deps = Pick<SlackDeps, 'templates' | 'people'>;

// The modal answers a submission or a button within Slack's 3 s; a slow Slack costs the person's
// language and time zone (English, UTC), never the answer.
const PERSON_WAIT_MS = 1000;

/** The templates modal of a channel as one person sees it: their language and time zone. */
export async function templatesView(
  deps: Deps,
  channelId: string,
  userId: string,
): Promise<ModalView> {
  const [person, templates, history] = await Promise.all([
    personWithin(deps.people, userId, PERSON_WAIT_MS),
    deps.templates.list(channelId),
    deps.templates.history(channelId, HISTORY_SHOWN),
  ]);
  const locale = person?.locale ?? 'en-US';
  return buildTemplatesModal(
    { channelId, locale, timeZone: person?.timeZone, templates, history },
    messagesFor(locale),
  );
}

/** What a person is told when they may not manage a place's templates. */
export function templateRefusal(
  verdict: Exclude<TemplatePlaceVerdict, 'allowed'>,
  channelId: string,
  t: Messages,
  managers: TemplateManagers,
): string {
  switch (verdict) {
    case 'not-a-channel':
      return t.templatesInDm;
    case 'app-not-in-channel':
      return t.templatesAppNotIn(channelId);
    case 'denied':
      return managers === 'admins'
        ? t.templatesNotAdmin(channelId)
        : t.templatesNotMember(channelId);
    case 'unsure':
      return t.templatesUnsure;
  }
}
