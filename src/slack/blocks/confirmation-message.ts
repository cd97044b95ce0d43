import type { KnownBlock, ModalView } from '@slack/types';
import type { StepConfirmation } from '../../approvals/step-confirmation.ts';
import type { Messages } from '../i18n.ts';
import { ACTION, BLOCK, CALLBACK } from '../ids.ts';
import { escapeMrkdwn, FIELD_MAX, fitMrkdwn, type SlackMessage } from './request-message.ts';

/** What the requester is shown: who wants what, for which approver, where it will be posted. */
function details(
  c: StepConfirmation,
  t: Messages,
  intro = t.confirmAsk(c.startedByChatId ? `<@${c.startedByChatId}>` : null),
): KnownBlock[] {
  const approver = c.approverChatId ? `<@${c.approverChatId}>` : t.confirmApproverSuggested;
  return [
    { type: 'section', text: { type: 'mrkdwn', text: intro } },
    {
      type: 'section',
      fields: [
        { type: 'mrkdwn', text: `*${t.titleLabel}*\n${fitMrkdwn(escapeMrkdwn(c.title), 1000)}` },
        { type: 'mrkdwn', text: `*${t.approverLabel}*\n${approver}` },
        { type: 'mrkdwn', text: `*${t.confirmPostedLabel}*\n${t.confirmWhere(c.channelId)}` },
        {
          type: 'mrkdwn',
          text: `*${t.noteLabel}*\n${fitMrkdwn(escapeMrkdwn(c.note), FIELD_MAX - 20)}`,
        },
      ],
    },
  ];
}

/** The question, with Start / Decline; both buttons carry the step's execution id. */
export function buildConfirmationMessage(
  c: StepConfirmation,
  t: Messages,
  minutes: number,
): SlackMessage {
  return {
    text: fitMrkdwn(t.confirmFallback(escapeMrkdwn(c.title)), 3000),
    blocks: [
      ...details(c, t),
      { type: 'context', elements: [{ type: 'mrkdwn', text: t.confirmDeadline(minutes) }] },
      {
        type: 'actions',
        block_id: BLOCK.confirmation,
        elements: [
          {
            type: 'button',
            action_id: ACTION.confirmStart,
            style: 'primary',
            text: { type: 'plain_text', text: t.confirmStart },
            value: c.executionId,
          },
          {
            type: 'button',
            action_id: ACTION.confirmDecline,
            style: 'danger',
            text: { type: 'plain_text', text: t.confirmDecline },
            value: c.executionId,
          },
        ],
      },
    ],
  };
}

/** The question once answered (or past its time): the same details, the outcome, no buttons. */
export function buildConfirmationOutcome(
  c: StepConfirmation,
  outcome: string,
  t: Messages,
): SlackMessage {
  const said = fitMrkdwn(outcome, FIELD_MAX);
  return {
    text: fitMrkdwn(`${t.confirmFallback(escapeMrkdwn(c.title))} — ${outcome}`, 3000),
    blocks: [...details(c, t), { type: 'context', elements: [{ type: 'mrkdwn', text: said }] }],
  };
}

/**
 * The same question in a modal, for a requester who ran the workflow themselves: Start submits,
 * Cancel (or closing it) ends the step. `notify_on_close` so that closing it is heard.
 */
export function buildConfirmationModal(c: StepConfirmation, t: Messages): ModalView {
  return {
    type: 'modal',
    callback_id: CALLBACK.confirmModal,
    private_metadata: c.executionId,
    notify_on_close: true,
    title: { type: 'plain_text', text: t.confirmModalTitle },
    submit: { type: 'plain_text', text: t.confirmStart },
    close: { type: 'plain_text', text: t.cancel },
    blocks: details(c, t, t.confirmInPlace),
  };
}
