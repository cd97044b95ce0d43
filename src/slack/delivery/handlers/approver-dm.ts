import { ruleOf } from '../../../approvals/announcement-rules.ts';
import { type AttemptClock, NOTHING_POSTED, type Posted } from '../../../approvals/announcer.ts';
import type { Announcement, TrackedApproval } from '../../../approvals/tracked-approval.ts';
import { buildApproverAnnouncement } from '../../blocks/announcement-messages.ts';
import { messagesFor } from '../../i18n.ts';
import type { DeliveryKit } from '../delivery-kit.ts';
import type { Reader } from '../poster.ts';
import { call, classOf } from '../slack-call.ts';
import type { Handler } from './handler.ts';
import { reminderOfTheDay } from './reminder-digest.ts';

// Deactivated, gone or hidden from the app, or not on Slack: recorded with the delivery, which
// stops the reminders and queues the note that tells the requester (once) and offers Request again.
const UNREACHABLE: Posted = { ...NOTHING_POSTED, approverUnreachable: true };

/** The approver's DM: the first one, a reminder, or its edit once decided. */
export const deliverApproverDm: Handler = async (a, approval, attempt, kit) => {
  const rule = ruleOf(a.kind);
  // An edit needs the DM we sent; nothing to edit when none was sent.
  const sent =
    rule.repeatable && kit.options.sentDm
      ? await kit.options.sentDm(approval.djbh, approval.parties.approver.term)
      : undefined;
  if (rule.repeatable && !sent) return NOTHING_POSTED;
  const approverId = await kit.readers.slackUserOf(attempt, approval);
  // Not on Slack: as unreachable as a deactivated account; an edit has nothing to say.
  if (!approverId) return rule.fallback === 'tell-requester' ? UNREACHABLE : NOTHING_POSTED;
  try {
    const approver = { chatId: approverId, login: approval.parties.approver.login };
    const posted = await toApprover(kit, attempt, a, approval, approver, sent);
    // An approver the service handed it to, found by their login: recorded with the delivery.
    return approval.parties.approver.term > 0 &&
      !approval.parties.approver.slackId &&
      !posted.approverUnreachable
      ? { ...posted, approverChatId: approverId }
      : posted;
  } catch (error) {
    if (classOf(error) !== 'fallback') throw error;
    return UNREACHABLE;
  }
};

async function toApprover(
  kit: DeliveryKit,
  attempt: AttemptClock,
  a: Announcement,
  approval: TrackedApproval,
  reader: Reader,
  sent: Posted | undefined,
): Promise<Posted> {
  const { poster } = kit;
  attempt.check();
  const approver = await call('users.info', () => kit.options.people.get(reader.chatId));
  // Deactivated: Slack may still take a post to an existing DM with them, which nobody reads. As
  // unreachable as a refused post.
  if (approver.presence.deactivated) return UNREACHABLE;
  if (a.kind === 'reminder' && kit.options.digest) {
    const day = await reminderOfTheDay(kit, attempt, a, approval, reader, approver);
    if (day.as === 'covered') return day.by;
    if (day.as === 'digest') return poster.post(attempt, approval, reader, day.message, a);
  }
  const thread = approval.slack.messageTs ?? undefined;
  const link = thread
    ? await poster.permalink(attempt, approval.slack.channelId, thread)
    : undefined;
  const links = {
    ...(link ? { thread: link } : {}),
    ...(kit.options.webListUrl ? { listUrl: kit.options.webListUrl } : {}),
  };
  const waited = kit.waitedMs(a, approval, approver.timeZone);
  const dm = buildApproverAnnouncement(a, approval, messagesFor(approver.locale), links, waited);
  if (!sent) return poster.post(attempt, approval, reader, dm, a);
  return poster.edit(attempt, a, sent, dm);
}
