import type { HomeView, KnownBlock } from '@slack/types';
import { type AccountLinking, LINKING, type LinkedAccount } from '../../approvals/account-links.ts';
import type { Page } from '../../approvals/approval-repository.ts';
import { escalatedOnlyTo } from '../../approvals/escalation.ts';
import { mayRequestAgain } from '../../approvals/request-again.ts';
import type { StepPlace } from '../../approvals/step-places.ts';
import type { TrackedApproval } from '../../approvals/tracked-approval.ts';
import type { Messages } from '../i18n.ts';
import { ACTION } from '../ids.ts';
import { delegationSection, type HomeDelegation } from './home-delegation.ts';
import { escapeMrkdwn, fitMrkdwn, linkButton, personRef, SECTION_MAX } from './request-message.ts';

/**
 * Rows per section: two sections and their frame, a "Request again" row under each of my
 * requests that ended without a yes, and the delegate section (at most 4) stay within the Home
 * tab's 100 blocks (at most 72).
 */
export const HOME_ROWS = 20;

export interface HomeState {
  login: string | null;
  linked: LinkedAccount | undefined;
  /** What to say to someone without a login (ACCOUNT_LINKING). */
  linking: AccountLinking;
  waiting: Page;
  mine: Page;
  permalinks: Map<string, string>;
  webUrl?: string;
  /** The approver's list on the service's web UI, for what waits for them (web-links.ts). */
  webListUrl?: string;
  now: Date;
  /** Where each step of a request in several steps stands ("Step 2 of 3"). */
  places?: ReadonlyMap<string, StepPlace>;
  /** The person's delegate while away (home-delegation.ts); absent without a login. */
  delegation?: HomeDelegation;
}

export function buildHomeView(s: HomeState, t: Messages): HomeView {
  // A link kept from before ACCOUNT_LINKING=off is not used: Home says what the app uses.
  const linked = LINKING[s.linking].linksUsed ? s.linked : undefined;
  const who = linked
    ? t.homeLinkedAs(escapeMrkdwn(linked.name), escapeMrkdwn(linked.login))
    : s.login
      ? t.homeLoginFromEmail(escapeMrkdwn(s.login))
      : t.noLogin(s.linking);
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: t.homeIntro } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: who }] },
    // What waits for me names who asks; my own requests name who decides.
    ...section(t.homeWaiting, s.waiting, s, t, 'requester'),
    ...section(t.homeMine, s.mine, s, t, 'approver'),
    ...(s.delegation ? delegationSection(s.delegation, t) : []),
  ];
  return { type: 'home', blocks };
}

type Counterpart = 'requester' | 'approver';

function section(
  title: string,
  page: Page,
  s: HomeState,
  t: Messages,
  counterpart: Counterpart,
): KnownBlock[] {
  const blocks: KnownBlock[] = [
    { type: 'divider' },
    { type: 'header', text: { type: 'plain_text', text: `${title} (${page.total})` } },
  ];
  const rows = page.approvals.slice(0, HOME_ROWS);
  if (rows.length === 0)
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: t.homeNone }] });
  for (const a of rows) {
    blocks.push(row(a, s, t, counterpart));
    // My own request, over without a yes: start it again from here.
    if (counterpart === 'approver' && mayRequestAgain(a)) blocks.push(requestAgainActions(a, t));
  }
  if (page.total > rows.length) {
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: t.homeMore(page.total - rows.length) }],
    });
  }
  return blocks;
}

function row(a: TrackedApproval, s: HomeState, t: Messages, counterpart: Counterpart): KnownBlock {
  const link = s.permalinks.get(a.djbh);
  // What waits for me is in my list on the service; my own requests are in someone else's.
  const service = counterpart === 'requester' ? (s.webListUrl ?? s.webUrl) : s.webUrl;
  const title = fitMrkdwn(escapeMrkdwn(a.request.title), 400);
  const heading = link ? `*<${link}|${title}>*` : `*${title}*`;
  // Waiting for me only because it was escalated to me: it waits for its approver, said so.
  const escalated = counterpart === 'requester' && escalatedOnlyTo(a, s.login);
  const details = escalated
    ? [
        t.escalatedToYou(
          personRef(a.parties.approver.slackId, a.parties.approver.login),
          t.waited(s.now.getTime() - a.request.createdAt.getTime()),
        ),
        personRef(a.parties.requester.slackId, a.parties.requester.login),
      ]
    : [
        t.status(a.outcome.decision),
        age(a.request.createdAt, s.now, t),
        counterpart === 'requester'
          ? personRef(a.parties.requester.slackId, a.parties.requester.login)
          : personRef(a.parties.approver.slackId, a.parties.approver.login),
      ];
  const place = s.places?.get(a.djbh);
  if (place) details.push(t.stepOfRequest(place.position, place.steps));
  return {
    type: 'section',
    text: {
      type: 'mrkdwn',
      text: fitMrkdwn(`${heading}  \`${a.djbh}\`\n${details.join(' · ')}`, SECTION_MAX),
    },
    ...(service
      ? { accessory: linkButton(`${ACTION.openInService}_${a.djbh}`, t.serviceLink, service) }
      : {}),
  };
}

function requestAgainActions(a: TrackedApproval, t: Messages): KnownBlock {
  return {
    type: 'actions',
    elements: [
      {
        type: 'button',
        action_id: ACTION.requestAgain,
        text: { type: 'plain_text', text: t.requestAgain },
        value: a.djbh,
      },
    ],
  };
}

export function age(from: Date, now: Date, t: Messages): string {
  const minutes = Math.max(0, Math.floor((now.getTime() - from.getTime()) / 60_000));
  if (minutes < 60) return t.ageMinutes(minutes);
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return t.ageHours(hours);
  return t.ageDays(Math.floor(hours / 24));
}
