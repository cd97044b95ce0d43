import type { AttemptClock, Posted } from '../../../approvals/announcer.ts';
import { digestEntries } from '../../../approvals/reminder-digest.ts';
import type { Announcement, TrackedApproval } from '../../../approvals/tracked-approval.ts';
import { buildReminderDigest, type DigestItem } from '../../blocks/announcement-messages.ts';
import type { SlackMessage } from '../../blocks/request-message.ts';
import { messagesFor } from '../../i18n.ts';
import type { DeliveryKit } from '../delivery-kit.ts';
import type { Reader } from '../poster.ts';
import { dayDelivery } from './day-digest.ts';

/**
 * How this reminder reaches the approver (reminder-digest.ts): alone, as the day's digest of
 * everything waiting for them to decide (built here), or inside the digest already posted today.
 * The reminder's recording time is "now": it was recorded inside their working hours.
 */
export async function reminderOfTheDay(
  kit: DeliveryKit,
  attempt: AttemptClock,
  a: Announcement,
  approval: TrackedApproval,
  reader: Reader,
  approver: { timeZone: string | undefined; locale: string },
): Promise<
  { as: 'single' } | { as: 'covered'; by: Posted } | { as: 'digest'; message: SlackMessage }
> {
  const digest = kit.options.digest;
  if (!digest) return { as: 'single' };
  const { timeZone } = approver;
  const day = await dayDelivery(kit, attempt, {
    a,
    reader,
    timeZone,
    earlier: () => digest.lastReminderPost(approval.parties.approver.login),
    // A digest Slack took but whose answer was lost would list this one too.
    unsettled: async () =>
      (await digest.reminderMayBePosted?.(approval.parties.approver.login, a)) ?? false,
    // Only those waiting for them to decide: never one only escalated to them.
    entries: digestEntries,
  });
  if (day.as !== 'digest') return day;
  const items: DigestItem[] = [];
  for (const waiting of day.approvals) {
    const link = waiting.slack.messageTs
      ? await kit.poster.permalink(attempt, waiting.slack.channelId, waiting.slack.messageTs)
      : undefined;
    items.push({
      approval: waiting,
      ...(link ? { link } : {}),
      waitedMs:
        kit.waitedMs(a, waiting, timeZone) ??
        a.createdAt.getTime() - waiting.request.createdAt.getTime(),
    });
  }
  const t = messagesFor(approver.locale);
  return { as: 'digest', message: buildReminderDigest(items, day.total, t) };
}
