import type { KnownBlock, ModalView } from '@slack/types';
import type { Page } from '../../approvals/approval-repository.ts';
import type { Decision } from '../../approvals/approval-types.ts';
import { escalatedOnlyTo } from '../../approvals/escalation.ts';
import type { StepPlace } from '../../approvals/step-places.ts';
import type { TrackedApproval } from '../../approvals/tracked-approval.ts';
import type { Messages } from '../i18n.ts';
import { ACTION, BLOCK, CALLBACK } from '../ids.ts';
import { bannerBlock, textInputBlock } from './approval-modal.ts';
import {
  escapeMrkdwn,
  FIELD_MAX,
  fitMrkdwn,
  personRef,
  SECTION_MAX,
  type SlackMessage,
} from './request-message.ts';

export function buildTextMessage(text: string): SlackMessage {
  const fitted = fitMrkdwn(text, SECTION_MAX);
  return { text: fitted, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: fitted } }] };
}

/** `/approve status`: what the service says now, with the app's own record when it has one. */
export function buildStatusMessage(
  djbh: string,
  decision: Decision,
  about: {
    tracked?: TrackedApproval | undefined;
    /** mrkdwn: a mention, or the escaped login of someone not on Slack. */
    approver?: string | undefined;
    link?: string | undefined;
    /** Its place in a request in several steps. */
    step?: { position: number; steps: number } | undefined;
  },
  t: Messages,
): SlackMessage {
  const line = t.statusOf(djbh, t.status(decision));
  const details: string[] = [];
  if (about.tracked)
    details.push(t.statusTitle(fitMrkdwn(escapeMrkdwn(about.tracked.request.title), 1000)));
  if (about.approver) details.push(t.statusApprover(about.approver));
  if (about.step) details.push(t.stepOfRequest(about.step.position, about.step.steps));
  if (about.link) details.push(`<${about.link}|${t.threadLink}>`);
  const blocks: KnownBlock[] = [{ type: 'section', text: { type: 'mrkdwn', text: line } }];
  if (details.length > 0)
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: fitMrkdwn(details.join(' · '), FIELD_MAX) }],
    });
  return { text: t.statusOf(djbh, t.statusPlain(decision)), blocks };
}

const LIST_ROWS = 10;

/** `/approve list`: my open requests and what waits for me. */
export function buildListMessage(
  mine: TrackedApproval[],
  waiting: Page,
  t: Messages,
  reader: { login: string | null; now: Date } = { login: null, now: new Date(0) },
  /** Where each step of a request in several steps stands ("Step 2 of 3"). */
  places: ReadonlyMap<string, StepPlace> = new Map(),
): SlackMessage {
  // One only escalated to the reader waits for its approver: said so, never as theirs to decide.
  const state = (a: TrackedApproval) =>
    escalatedOnlyTo(a, reader.login)
      ? t.escalatedToYou(
          personRef(a.parties.approver.slackId, a.parties.approver.login),
          t.waited(reader.now.getTime() - a.request.createdAt.getTime()),
        )
      : t.status(a.outcome.decision);
  const place = (a: TrackedApproval) => {
    const p = places.get(a.djbh);
    return p ? ` · ${t.stepOfRequest(p.position, p.steps)}` : '';
  };
  const row = (a: TrackedApproval) =>
    `• \`${a.djbh}\` ${fitMrkdwn(escapeMrkdwn(a.request.title), 80)} — ${state(a)}${place(a)}`;
  const section = (title: string, items: TrackedApproval[], total: number) => {
    const lines = items.slice(0, LIST_ROWS).map(row);
    if (lines.length === 0) lines.push(t.listNone);
    if (total > LIST_ROWS) lines.push(t.listMore(total - LIST_ROWS));
    return {
      type: 'section' as const,
      text: {
        type: 'mrkdwn' as const,
        text: fitMrkdwn(`*${title}*\n${lines.join('\n')}`, SECTION_MAX),
      },
    };
  };
  return {
    text: `${t.listTitleMine}: ${mine.length} · ${t.listTitleWaiting}: ${waiting.total}`,
    blocks: [
      section(t.listTitleMine, mine, mine.length),
      section(t.listTitleWaiting, waiting.approvals, waiting.total),
    ],
  };
}

/** `/approve link`: asks for the session token. Never prefilled: the token is not echoed back. */
export function buildLinkModal(t: Messages, banner?: string): ModalView {
  const blocks: KnownBlock[] = [];
  if (banner) blocks.push(bannerBlock(banner));
  // Never prefilled: the token is not echoed back.
  blocks.push(
    textInputBlock({
      blockId: BLOCK.sessionToken,
      actionId: ACTION.sessionToken,
      label: t.linkLabel,
      hint: t.linkHint,
      maxLength: 512,
    }),
  );
  return {
    type: 'modal',
    callback_id: CALLBACK.linkModal,
    title: { type: 'plain_text', text: t.linkTitle },
    submit: { type: 'plain_text', text: t.linkSubmit },
    close: { type: 'plain_text', text: t.cancel },
    blocks,
  };
}
