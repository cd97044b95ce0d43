import type { Button, KnownBlock } from '@slack/types';
import type { Decision } from '../../approvals/approval-types.ts';
import { mayRequestAgain } from '../../approvals/request-again.ts';
import type { TrackedApproval } from '../../approvals/tracked-approval.ts';
import type { Messages } from '../i18n.ts';
import { ACTION } from '../ids.ts';

export interface SlackMessage {
  text: string;
  blocks: KnownBlock[];
}

const NOTE_PREVIEW = 600;

/** Mentions a person by Slack id when we have one, else by their service login (as text). */
export function personRef(slackId: string | null, login: string): string {
  return slackId ? `<@${slackId}>` : escapeMrkdwn(login);
}

/** Slack's limits on mrkdwn text: a section's text, and a field or context element. */
export const SECTION_MAX = 3000;
export const FIELD_MAX = 2000;

/**
 * Cuts mrkdwn that is already escaped to `max` characters without splitting an entity (`&amp;`)
 * or a mention or link (`<…>`), marking the cut. Escaping can make text up to five times longer,
 * so limits are applied after it, never before.
 */
export function fitMrkdwn(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  let cut = max - 1;
  // Back off to before an entity or a <…> that the cut would leave open.
  const tail = chars.slice(Math.max(0, cut - 600), cut).join('');
  const amp = tail.lastIndexOf('&');
  if (amp >= 0 && !tail.slice(amp).includes(';')) cut -= tail.length - amp;
  const head = chars.slice(0, cut).join('');
  const open = head.lastIndexOf('<');
  if (open >= 0 && head.indexOf('>', open) < 0) cut = [...head.slice(0, open)].length;
  return `${chars.slice(0, cut).join('')}…`;
}

/** The request message that starts the thread; re-rendered when the status changes. */
export function buildRequestMessage(
  a: TrackedApproval,
  t: Messages,
  webUrl?: string,
  /** The permalink of the request that requested this one again (a.requestedAgainAs), if known. */
  againLink?: string,
  /** A request in several steps: where its steps stand, one line (steps.ts). */
  progress?: string,
): SlackMessage {
  const blocks: KnownBlock[] = [
    {
      type: 'header',
      text: { type: 'plain_text', text: truncate(`${t.requestHeader}: ${a.request.title}`, 150) },
    },
    {
      type: 'section',
      fields: [
        {
          type: 'mrkdwn',
          text: `*${t.requester}*\n${personRef(a.parties.requester.slackId, a.parties.requester.login)}`,
        },
        {
          type: 'mrkdwn',
          text: `*${t.approver}*\n${personRef(a.parties.approver.slackId, a.parties.approver.login)}`,
        },
        { type: 'mrkdwn', text: `*${t.number}*\n\`${a.djbh}\`` },
        { type: 'mrkdwn', text: `*${t.statusLabel}*\n${statusText(a, t)}` },
      ],
    },
    { type: 'section', text: { type: 'mrkdwn', text: quote(a.request.note, NOTE_PREVIEW) } },
    ...(progress
      ? [{ type: 'context' as const, elements: [{ type: 'mrkdwn' as const, text: progress }] }]
      : []),
    { type: 'context', elements: [{ type: 'mrkdwn', text: t.followInThread }] },
  ];
  // Under the header: where the request came from (a template, an earlier request).
  const { template, againOf } = a.request;
  const origins = [
    ...(template?.name ? [t.fromTemplate(escapeMrkdwn(template.name))] : []),
    ...(againOf ? [t.requestedAgainOf(approvalRef(againOf.djbh, againOf.link))] : []),
  ];
  if (origins.length > 0) {
    blocks.splice(1, 0, {
      type: 'context',
      elements: origins.map((text) => ({ type: 'mrkdwn' as const, text })),
    });
  }
  // Requested again already: where its button was, the link to the new request. Named only once
  // it is posted in this same conversation: one posted elsewhere (the requester's DM, having left
  // this channel) is not for this channel's members to know of.
  const again = a.request.requestedAgainAs;
  if (again) {
    const here = again.message?.channelId === a.slack.channelId;
    blocks.push({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: here ? t.requestedAgainAs(approvalRef(again.djbh, againLink)) : t.requestedAgain,
        },
      ],
    });
  }
  if (webUrl) blocks.push(openInServiceActions(t, webUrl));
  // Over without a yes: its requester may start it again from here (only they: see the listener).
  if (mayRequestAgain(a)) {
    const again: Button = {
      type: 'button',
      action_id: ACTION.requestAgain,
      text: { type: 'plain_text', text: t.requestAgain },
      value: a.djbh,
    };
    const last = blocks.at(-1);
    if (last?.type === 'actions') last.elements.push(again);
    else blocks.push({ type: 'actions', elements: [again] });
  }
  // Slack uses `text` for notifications: what a person typed must not mention or link there either.
  return {
    text: fitMrkdwn(
      t.requestFallback(escapeMrkdwn(a.request.title), a.djbh, a.outcome.decision),
      SECTION_MAX,
    ),
    blocks,
  };
}

/** What the request message shows as its status, including when nobody follows it any more. */
function statusText(a: TrackedApproval, t: Messages): string {
  if (a.outcome.decision !== 'pending' || a.outcome.tracking === 'active')
    return t.status(a.outcome.decision);
  if (a.outcome.tracking === 'finished' && a.outcome.unknownSince === null) return t.closedStatus;
  return t.notFollowedStatus;
}

export function buildDecisionReply(
  decision: Decision,
  by: string,
  requester: string,
  t: Messages,
): SlackMessage {
  if (decision === 'pending') {
    return {
      text: t.backToPending,
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: t.backToPending } }],
    };
  }
  return {
    text: t.decidedFallback(decision, by, requester),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: t.decided(decision, by, requester) } },
    ],
  };
}

/** A reply of one mrkdwn text, already escaped where it holds people's words. */
export function buildTextReply(text: string): SlackMessage {
  const fitted = fitMrkdwn(text, SECTION_MAX);
  return { text: fitted, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: fitted } }] };
}

/**
 * A reply that offers its approval's requester "Request again" (the approver cannot be reached):
 * the text, then the button. Anyone may see it; the listener lets only the requester use it.
 */
export function buildRequestAgainReply(text: string, djbh: string, t: Messages): SlackMessage {
  const reply = buildTextReply(text);
  return {
    text: reply.text,
    blocks: [
      ...reply.blocks,
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            action_id: ACTION.requestAgain,
            text: { type: 'plain_text', text: t.requestAgain },
            value: djbh,
          },
        ],
      },
    ],
  };
}

/**
 * A step whose start may exist in the service (steps.ts): the text, then a button to start it
 * (`<approval>:<position>`); the listener lets only the requester use it.
 */
export function buildStartStepReply(
  text: string,
  djbh: string,
  position: number,
  t: Messages,
): SlackMessage {
  const reply = buildTextReply(text);
  return {
    text: reply.text,
    blocks: [
      ...reply.blocks,
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            action_id: ACTION.startStep,
            text: { type: 'plain_text', text: t.startChainStep(position) },
            value: `${djbh}:${position}`,
          },
        ],
      },
    ],
  };
}

/** The approver's DM: who asks, what, and where to decide. */
export function buildApproverDm(
  a: TrackedApproval,
  t: Messages,
  links: { thread?: string; webUrl?: string; listUrl?: string },
  /** Replaces the opening line, e.g. for a reminder. */
  opening?: string,
): SlackMessage {
  const requester = personRef(a.parties.requester.slackId, a.parties.requester.login);
  const first = opening ?? t.approverDm(requester);
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: first } },
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: fitMrkdwn(
          `*${escapeMrkdwn(a.request.title)}*  \`${a.djbh}\`\n${quote(a.request.note, NOTE_PREVIEW)}`,
          SECTION_MAX,
        ),
      },
    },
  ];
  // The service has no page of its own for one approval: the list of the approver's approvals is
  // the nearest, so the DM says which row is this one.
  if (links.listUrl && a.outcome.decision === 'pending' && a.outcome.tracking === 'active') {
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: t.lookForNumber(escapeMrkdwn(a.djbh)) }],
    });
  }
  // Edited once the approval is decided or no longer followed, so the DM does not go stale.
  if (a.outcome.decision !== 'pending' || a.outcome.tracking !== 'active') {
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `*${t.statusLabel}*: ${statusText(a, t)}` }],
    });
  }
  const buttons: Button[] = [];
  if (links.thread) buttons.push(linkButton(ACTION.viewThread, t.viewThread, links.thread));
  const service = links.listUrl ?? links.webUrl;
  if (service) buttons.push(linkButton(ACTION.openInService, t.openInService, service));
  if (buttons.length > 0) blocks.push({ type: 'actions', elements: buttons });
  return {
    text: fitMrkdwn(`${first} ${escapeMrkdwn(a.request.title)} (${a.djbh})`, SECTION_MAX),
    blocks,
  };
}

/** An approval number, linked to its request message when Slack gave a permalink. */
function approvalRef(djbh: string, link: string | null | undefined): string {
  const number = escapeMrkdwn(djbh);
  // A permalink from chat.getPermalink; anything that could break out of <url|label> is dropped.
  // Slack shows code marks inside a link's label as literal backticks, so a linked number is plain.
  return link && /^https:\/\/[^\s<>|]+$/.test(link) ? `<${link}|${number}>` : `\`${number}\``;
}

function openInServiceActions(t: Messages, webUrl: string): KnownBlock {
  return { type: 'actions', elements: [linkButton(ACTION.openInService, t.openInService, webUrl)] };
}

/** A button that opens a URL (Slack still sends the click, which the app acknowledges). */
export function linkButton(actionId: string, text: string, url: string): Button {
  return { type: 'button', action_id: actionId, text: { type: 'plain_text', text }, url };
}

/** Shortens to `max` characters on a character boundary, marking the cut. */
export function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** Slack mrkdwn treats &, < and > as markup; people's text must show as typed. */
export function escapeMrkdwn(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** People's text as a quote: escaped, then cut to `max`, each line marked. */
function quote(text: string, max: number): string {
  return fitMrkdwn(escapeMrkdwn(text), max)
    .split('\n')
    .map((line) => `>${line}`)
    .join('\n');
}
