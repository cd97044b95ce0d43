import type { ModalView } from '@slack/types';
import type { Messages } from '../i18n.ts';
import { ACTION, BLOCK, CALLBACK } from '../ids.ts';

/**
 * App Home's "while I am away" modal: who gets new requests for me (a users_select: the app finds
 * their service login through the identities when it is saved) and until which day.
 */
export function buildDelegateModal(
  t: Messages,
  current: { delegateChatId: string | null; untilDate: string | null },
): ModalView {
  return {
    type: 'modal',
    callback_id: CALLBACK.delegateModal,
    title: { type: 'plain_text', text: t.delegateModalTitle },
    submit: { type: 'plain_text', text: t.delegateSave },
    close: { type: 'plain_text', text: t.cancel },
    blocks: [
      {
        type: 'input',
        block_id: BLOCK.delegateTo,
        label: { type: 'plain_text', text: t.delegateToLabel },
        element: {
          type: 'users_select',
          action_id: ACTION.delegateTo,
          ...(current.delegateChatId ? { initial_user: current.delegateChatId } : {}),
        },
      },
      {
        type: 'input',
        block_id: BLOCK.delegateUntil,
        label: { type: 'plain_text', text: t.delegateUntilLabel },
        element: {
          type: 'datepicker',
          action_id: ACTION.delegateUntil,
          ...(current.untilDate ? { initial_date: current.untilDate } : {}),
        },
      },
      { type: 'context', elements: [{ type: 'mrkdwn', text: t.delegateHint }] },
    ],
  };
}
