import type { WebClient } from '@slack/web-api';
import { logFailure } from '../../logger.ts';
import { buildApprovalModal, buildMessageModal } from '../blocks/approval-modal.ts';
import { messagesFor } from '../i18n.ts';
import type { SlackDeps } from '../slack-deps.ts';
import { type FormPlace, fillApprovalForm, formPlace } from './approval-form.ts';

type Deps = Pick<
  SlackDeps,
  'people' | 'identities' | 'service' | 'logger' | 'now' | 'templates' | 'access' | 'delegations'
>;

export interface FormOpening extends FormPlace {
  triggerId: string;
  userId: string;
  title: string;
  note?: string;
  /**
   * A better prefill, worked out while the form is already open (names for a message's mentions,
   * its permalink): the trigger id lives 3 s, so nothing slow may come before the form opens.
   */
  refine?: () => Promise<
    { title: string; note: string; templateId?: string | undefined } & Pick<FormPlace, 'againOf'>
  >;
}

/**
 * Opens the request form at once (the trigger id lives 3 s, and only once), then looks the person
 * up and fills in their department, the suggested approver and the refined prefill with
 * views.update. Used by /approve and both shortcuts; the caller has acknowledged already.
 */
export async function openApprovalForm(
  deps: Deps,
  client: WebClient,
  opening: FormOpening,
): Promise<void> {
  const { userId } = opening;
  // Before the first users.info answer we do not know the language; a cached one is used if any.
  const t = messagesFor(deps.people.cached(userId)?.locale);
  let opened: Awaited<ReturnType<typeof client.views.open>>;
  try {
    opened = await client.views.open({
      trigger_id: opening.triggerId,
      view: buildApprovalModal(
        {
          title: opening.title,
          note: opening.note ?? '',
          info: [t.lookingUp],
          metadata: { ...formPlace(opening), locale: 'en-US' },
        },
        t,
      ),
    });
  } catch (error) {
    // Typically expired_trigger_id: Slack took too long to reach us. The person can try again.
    logFailure(deps.logger, error, { user: userId }, 'could not open the approval form');
    return;
  }
  const viewId = opened.view?.id;
  if (!viewId) return;
  try {
    const prefill = opening.refine
      ? await opening.refine()
      : { title: opening.title, note: opening.note ?? '' };
    const filled = await fillApprovalForm(deps, { ...opening, ...prefill });
    await client.views.update({
      view_id: viewId,
      hash: opened.view?.hash,
      view: buildApprovalModal(filled.state, filled.t),
    });
  } catch (error) {
    // A hash conflict means the person already moved on (submitted or closed): nothing to fill.
    if ((error as { data?: { error?: string } }).data?.error === 'hash_conflict') return;
    logFailure(deps.logger, error, { user: userId }, 'could not fill the approval form');
    await client.views
      .update({ view_id: viewId, view: buildMessageModal([t.somethingWrong], t) })
      .catch(() => undefined);
  }
}
