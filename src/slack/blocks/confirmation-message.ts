import type { KnownBlock, ModalView } from '@slack/types';
import type { StepConfirmation } from '../../approvals/step-confirmation.ts';
import { ruleText } from '../../approvals/steps.ts';
import type { Messages } from '../i18n.ts';
import { ACTION, BLOCK, CALLBACK } from '../ids.ts';
import {
  escapeMrkdwn,
  FIELD_MAX,
  fitMrkdwn,
  SECTION_MAX,
  type SlackMessage,
} from './request-message.ts';

// A part of the title or note per section, under Slack's 3,000 characters with room to spare.
const PART_MAX = SECTION_MAX - 100;
// Sections the title and note may take: a message holds 50 blocks, and the question needs at
// most eight more (who asks, the fields, the delegate, the later steps, two labels, the deadline,
// the buttons).
const MAX_TEXT_SECTIONS = 40;

/**
 * Escaped mrkdwn cut into parts of at most `max` characters, at a line break where one is near,
 * never inside an entity (`&amp;`): the parts joined are exactly the text, nothing left out.
 */
export function splitMrkdwn(text: string, max = PART_MAX): string[] {
  const chars = [...text];
  const parts: string[] = [];
  let start = 0;
  while (chars.length - start > max) {
    let end = start + max;
    const window = chars.slice(start, end).join('');
    const nl = window.lastIndexOf('\n');
    if (nl > max / 2) end = start + [...window.slice(0, nl + 1)].length;
    else {
      const amp = window.lastIndexOf('&');
      if (amp >= 0 && !window.slice(amp).includes(';'))
        end = start + [...window.slice(0, amp)].length;
    }
    parts.push(chars.slice(start, end).join(''));
    start = end;
  }
  parts.push(chars.slice(start).join(''));
  return parts;
}

/** Whether a title and note can be shown whole in the question (else it is not asked). */
export function confirmationFits(title: string, note: string): boolean {
  const parts = splitMrkdwn(escapeMrkdwn(title)).length + splitMrkdwn(escapeMrkdwn(note)).length;
  return parts <= MAX_TEXT_SECTIONS;
}

/** The steps after the first, numbered from 2, as the request will run them (steps.ts). */
function laterSteps(c: StepConfirmation, t: Messages): KnownBlock[] {
  if (!c.laterSteps?.length) return [];
  const steps = c.laterSteps.map((rule, i) => `${i + 2}. ${escapeMrkdwn(ruleText(rule))}`);
  const text = `*${t.confirmLaterStepsLabel}*\n${steps.join('\n')}`;
  return [{ type: 'section', text: { type: 'mrkdwn', text: fitMrkdwn(text, SECTION_MAX) } }];
}

/**
 * What the requester is shown: who wants what, for which approver, where it will be posted. The
 * title and note whole, over as many sections as they take: what Start starts is exactly this.
 */
function details(
  c: StepConfirmation,
  t: Messages,
  intro = t.confirmAsk(c.startedByChatId ? `<@${c.startedByChatId}>` : null),
): KnownBlock[] {
  const approver = c.approverChatId ? `<@${c.approverChatId}>` : t.confirmApproverSuggested;
  const whole = (label: string, text: string): KnownBlock[] => [
    { type: 'context', elements: [{ type: 'mrkdwn', text: `*${label}*` }] },
    ...splitMrkdwn(escapeMrkdwn(text)).map(
      (part): KnownBlock => ({ type: 'section', text: { type: 'mrkdwn', text: part || ' ' } }),
    ),
  ];
  return [
    { type: 'section', text: { type: 'mrkdwn', text: intro } },
    {
      type: 'section',
      fields: [
        { type: 'mrkdwn', text: `*${t.approverLabel}*\n${approver}` },
        { type: 'mrkdwn', text: `*${t.confirmPostedLabel}*\n${t.confirmWhere(c.channelId)}` },
      ],
    },
    ...delegated(c, t),
    ...laterSteps(c, t),
    ...whole(t.titleLabel, c.title),
    ...whole(t.noteLabel, c.note),
  ];
}

/** "Maria is away until 3 Dec; their delegate is Alex", when the step named someone away. */
function delegated(c: StepConfirmation, t: Messages): KnownBlock[] {
  const by = c.approverDelegatedBy;
  if (!by || !c.approverChatId) return [];
  const line = t.delegatedToStep(
    `<@${by.chatId}>`,
    by.until,
    by.timeZone,
    `<@${c.approverChatId}>`,
  );
  return [{ type: 'context', elements: [{ type: 'mrkdwn', text: line }] }];
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
