import { type AttemptClock, NOTHING_POSTED } from '../../../approvals/announcer.ts';
import type { Announcement, TrackedApproval } from '../../../approvals/tracked-approval.ts';
import { buildLeaderDm } from '../../blocks/announcement-messages.ts';
import type { SlackMessage } from '../../blocks/request-message.ts';
import { messagesFor } from '../../i18n.ts';
import type { DeliveryKit } from '../delivery-kit.ts';
import type { Reader } from '../poster.ts';
import { call, classOf } from '../slack-call.ts';
import { escalationsOfTheDay } from './escalation-digest.ts';
import type { Handler } from './handler.ts';

/**
 * The escalation DM to the approver's leader, in the leader's language: what the approver's DM
 * says (title, number, note) and the same links (the thread, the approval service), opened by who
 * has waited how long for whom; or, when several approvals were escalated to them, one DM listing
 * them all (escalation-digest.ts). No button decides anything: only the approver can, in the
 * service. A leader Slack will not let us reach gets nothing, and nobody is told instead.
 */
export const deliverEscalation: Handler = async (a, approval, attempt, kit) => {
  const escalatedTo = approval.followUp.escalatedTo;
  if (!escalatedTo) return NOTHING_POSTED;
  // The leader by their login, on the account that is theirs now; none: nobody is told.
  const chatId = await kit.readers.slackUserOf(attempt, approval, escalatedTo.login);
  if (!chatId) return NOTHING_POSTED;
  const to: Reader = { chatId, login: escalatedTo.login };
  try {
    attempt.check();
    const leader = await call('users.info', () => kit.options.people.get(to.chatId));
    // Deactivated since they were chosen: a DM nobody reads is not an escalation.
    if (leader.presence.deactivated) return NOTHING_POSTED;
    const day = await escalationsOfTheDay(kit, attempt, a, to, leader);
    if (day.as === 'covered') return day.by;
    const dm =
      day.as === 'digest' ? day.message : await leaderDm(kit, attempt, a, approval, leader.locale);
    return await kit.poster.post(attempt, approval, to, dm, a);
  } catch (error) {
    if (classOf(error) !== 'fallback') throw error;
    return NOTHING_POSTED;
  }
};

/** The DM about this one approval. */
async function leaderDm(
  kit: DeliveryKit,
  attempt: AttemptClock,
  a: Announcement,
  approval: TrackedApproval,
  locale: string,
): Promise<SlackMessage> {
  const thread = approval.slack.messageTs;
  const link = thread
    ? await kit.poster.permalink(attempt, approval.slack.channelId, thread)
    : undefined;
  // The wait is the approver's: counted in their working hours.
  const approverId = await kit.readers.slackUserOf(attempt, approval).catch(() => null);
  const approverZone = approverId ? await kit.readers.timeZoneOf(approverId) : undefined;
  return buildLeaderDm(
    a,
    approval,
    messagesFor(locale),
    {
      ...(link ? { thread: link } : {}),
      ...(kit.options.webUrl ? { webUrl: kit.options.webUrl } : {}),
    },
    kit.waitedMs(a, approval, approverZone),
  );
}
