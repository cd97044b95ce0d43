import type { Person } from '../../approvals/person.ts';
import type { Announcement, TrackedApproval } from '../../approvals/tracked-approval.ts';
import type { Messages } from '../i18n.ts';
import {
  buildApproverDm,
  buildDecisionReply,
  buildRequestAgainReply,
  buildTextReply,
  escapeMrkdwn,
  personRef,
  type SlackMessage,
  truncate,
} from './request-message.ts';

/*
 * What each announcement says, given the announcement, its approval, the reader's language and
 * what delivery already looked up (names, links). No Slack calls: where a message goes, its
 * fallbacks and the calls are delivery/slack-announcer.ts.
 */

/**
 * Links an approver's or leader's DM offers: the request's thread, and the approval service:
 * the approver gets their list of approvals there (`listUrl`, see approval-service/web-links.ts),
 * the leader, whose list does not hold it, the service's front page (`webUrl`).
 */
export interface DmLinks {
  thread?: string;
  webUrl?: string;
  listUrl?: string;
}

const requesterOf = (approval: TrackedApproval) =>
  personRef(approval.parties.requester.slackId, approval.parties.requester.login);
const approverOf = (approval: TrackedApproval) =>
  personRef(approval.parties.approver.slackId, approval.parties.approver.login);
// In minutes or hours too: the sandbox reminds every minute. `waitedMs`, when given, is the
// wait counted in working time (working-hours.ts's workingWait); else it is the clock's.
const waitedFor = (a: Announcement, approval: TrackedApproval, t: Messages, waitedMs?: number) =>
  t.waited(waitedMs ?? a.createdAt.getTime() - approval.request.createdAt.getTime());

/** A message for the requester's DM, prefixed with which request it is about. */
export function buildRequesterDm(
  approval: TrackedApproval,
  t: Messages,
  message: SlackMessage,
): SlackMessage {
  const about = buildTextReply(
    t.aboutApproval(escapeMrkdwn(approval.request.title), approval.djbh),
  );
  return { text: `${about.text} ${message.text}`, blocks: [...about.blocks, ...message.blocks] };
}

/** The approver's DM (first, reminder, or its edit), in the approver's language. */
export function buildApproverAnnouncement(
  a: Announcement,
  approval: TrackedApproval,
  t: Messages,
  links: DmLinks,
  waitedMs?: number,
): SlackMessage {
  const opening =
    a.kind === 'reminder'
      ? t.reminderDm(requesterOf(approval), waitedFor(a, approval, t, waitedMs))
      : undefined;
  return buildApproverDm(approval, t, links, opening);
}

/**
 * The escalation DM to the approver's leader, in the leader's language: what the approver's DM
 * says and the same links, opened by who has waited how long for whom.
 */
export function buildLeaderDm(
  a: Announcement,
  approval: TrackedApproval,
  t: Messages,
  links: DmLinks,
  waitedMs?: number,
): SlackMessage {
  const opening = t.escalationDm(
    requesterOf(approval),
    approverOf(approval),
    waitedFor(a, approval, t, waitedMs),
    a.occurrence ?? 1,
  );
  return buildApproverDm(approval, t, links, opening);
}

/**
 * The thread's note that the approver was reminded. The approver is named (`approverName`, their
 * Slack name or login), not mentioned: the reminder is their DM, and a mention would notify them a
 * second time and make the whole channel watch the nagging.
 */
export function buildReminderNote(
  a: Announcement,
  t: Messages,
  approverName: string,
): SlackMessage {
  return buildTextReply(t.reminderNote(escapeMrkdwn(approverName), a.occurrence ?? 1));
}

/**
 * The service gave the approval to someone else: who had it and who has it now, by name (not
 * mentioned: the new approver is told in their DM).
 */
export function buildHandedOverNote(t: Messages, from: string, to: string): SlackMessage {
  return buildTextReply(t.handedOverNote(escapeMrkdwn(from), escapeMrkdwn(to)));
}

/**
 * The decision, as a reply to the request, crediting `decider`: whoever the service says decided
 * (its login, with the Slack account delivery found for it), who is not the recorded approver when
 * the service gave the approval to someone else.
 */
export function buildDecisionAnnouncement(
  a: Announcement,
  approval: TrackedApproval,
  t: Messages,
  decider: Person,
): SlackMessage {
  const by = personRef(decider.chatId, decider.login ?? approval.parties.approver.login);
  return buildDecisionReply(a.decision ?? approval.outcome.decision, by, requesterOf(approval), t);
}

export function buildGaveUpReply(t: Messages, giveUpAfterDays: number): SlackMessage {
  return buildTextReply(t.gaveUp(giveUpAfterDays));
}

export function buildEndedReply(approval: TrackedApproval, t: Messages): SlackMessage {
  return buildTextReply(t.ended(requesterOf(approval)));
}

export function buildVanishedReply(approval: TrackedApproval, t: Messages): SlackMessage {
  return buildTextReply(t.vanished(requesterOf(approval), approval.djbh));
}

/**
 * Tells the requester the approver cannot be reached, and offers Request again: deactivated or
 * hidden when the approver is on Slack (`onSlack`), or not on Slack at all.
 */
export function buildApproverUnreachableReply(
  approval: TrackedApproval,
  t: Messages,
  onSlack: boolean,
): SlackMessage {
  const reason = onSlack
    ? t.approverUnreachable(approverOf(approval))
    : t.approverNotOnSlack(escapeMrkdwn(approval.parties.approver.login));
  return buildRequestAgainReply(`${reason} ${t.requestAgainHint}`, approval.djbh, t);
}

/**
 * The thread's note that the approval was escalated. The leader is named (`leaderName`, their
 * Slack name or login), not mentioned: a mention would notify them a second time, beside their DM.
 */
export function buildEscalationNote(
  a: Announcement,
  approval: TrackedApproval,
  t: Messages,
  leaderName: string,
): SlackMessage {
  return buildTextReply(
    t.escalationNote(
      escapeMrkdwn(leaderName),
      approverOf(approval),
      a.occurrence ?? 1,
      approval.followUp.remindersSent,
    ),
  );
}

/** One approval in a reminder digest: where its thread is, and how long it has waited. */
export interface DigestItem {
  approval: TrackedApproval;
  link?: string;
  waitedMs: number;
}

/**
 * The day's one reminder to an approver with several approvals waiting, in their language: how
 * many, then each (title linked to its thread, number, who asked, how long it has waited), newest
 * first, and how many more than are listed.
 */
export function buildReminderDigest(items: DigestItem[], total: number, t: Messages): SlackMessage {
  const lines = items.map(({ approval, link, waitedMs }) =>
    t.digestLine(
      linkedTitle(approval, link),
      approval.djbh,
      requesterOf(approval),
      t.waited(waitedMs),
    ),
  );
  return digestMessage(t.reminderDigest(total), lines, total, t);
}

/** One approval in a leader's escalation digest: its approver (a mention, or their login) too. */
export interface EscalationDigestItem extends DigestItem {
  approver: string;
}

/**
 * A leader's escalations together, in their language: how many were escalated to them, then each
 * (title linked to its thread, number, who asked, and whom it waits for how long: never "waiting
 * for you", only its approver can decide it), and how many more than are listed.
 */
export function buildEscalationDigest(
  items: EscalationDigestItem[],
  total: number,
  t: Messages,
): SlackMessage {
  const lines = items.map(({ approval, link, waitedMs, approver }) =>
    t.escalationDigestLine(
      linkedTitle(approval, link),
      approval.djbh,
      requesterOf(approval),
      approver,
      t.waited(waitedMs),
    ),
  );
  return digestMessage(t.escalationDigest(total), lines, total, t);
}

// Bold around the link, as Home writes it: Slack on Android shows a link whose text is formatted
// (`<url|*title*>`) as plain text, and the sandbox shows its asterisks.
function linkedTitle(approval: TrackedApproval, link: string | undefined): string {
  const title = escapeMrkdwn(truncate(approval.request.title, 80));
  return link ? `*<${link}|${title}>*` : `*${title}*`;
}

/** A list's message: its intro, a section per line, and how many more than are listed. */
function digestMessage(intro: string, items: string[], total: number, t: Messages): SlackMessage {
  const lines = items.map((line) => `• ${line}`);
  if (total > items.length) lines.push(t.digestMore(total - items.length));
  return {
    text: intro,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: intro } },
      ...lines.map((line) => ({
        type: 'section' as const,
        text: { type: 'mrkdwn' as const, text: line },
      })),
    ],
  };
}
