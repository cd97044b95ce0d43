import type { AttemptClock, Posted } from '../../../approvals/announcer.ts';
import { escalationEntries } from '../../../approvals/escalation-digest.ts';
import type { Announcement, TrackedApproval } from '../../../approvals/tracked-approval.ts';
import {
  buildEscalationDigest,
  type EscalationDigestItem,
} from '../../blocks/announcement-messages.ts';
import { personRef, type SlackMessage } from '../../blocks/request-message.ts';
import { messagesFor } from '../../i18n.ts';
import type { DeliveryKit } from '../delivery-kit.ts';
import type { Reader } from '../poster.ts';
import { dayDelivery } from './day-digest.ts';

/**
 * How this escalation reaches the leader (escalation-digest.ts): alone, as the day's one DM
 * listing every approval escalated to them and still waiting (built here), or inside the one
 * already posted today. Each listed approval passed WHO_MAY for this leader on its own.
 */
export async function escalationsOfTheDay(
  kit: DeliveryKit,
  attempt: AttemptClock,
  a: Announcement,
  leader: Reader,
  account: { timeZone: string | undefined; locale: string },
): Promise<
  { as: 'single' } | { as: 'covered'; by: Posted } | { as: 'digest'; message: SlackMessage }
> {
  const lastPost = kit.options.digest?.lastEscalationPost;
  if (!lastPost) return { as: 'single' };
  const day = await dayDelivery(kit, attempt, {
    a,
    reader: leader,
    // The leader's day: one DM a day in their own time zone.
    timeZone: account.timeZone,
    earlier: () => lastPost(leader.login),
    unsettled: async () =>
      (await kit.options.digest?.escalationMayBePosted?.(leader.login, a)) ?? false,
    entries: escalationEntries,
  });
  if (day.as !== 'digest') return day;
  const items: EscalationDigestItem[] = [];
  for (const waiting of day.approvals) items.push(await itemOf(kit, attempt, a, waiting));
  const t = messagesFor(account.locale);
  return { as: 'digest', message: buildEscalationDigest(items, day.total, t) };
}

/** One listed approval: its thread's link, its approver now, how long it has waited for them. */
async function itemOf(
  kit: DeliveryKit,
  attempt: AttemptClock,
  a: Announcement,
  waiting: TrackedApproval,
): Promise<EscalationDigestItem> {
  const link = waiting.slack.messageTs
    ? await kit.poster.permalink(attempt, waiting.slack.channelId, waiting.slack.messageTs)
    : undefined;
  // Its approver as the identities say now; the wait is counted in their working hours.
  const approver = await kit.readers.personOf(attempt, waiting);
  const zone = approver.chatId ? await kit.readers.timeZoneOf(approver.chatId) : undefined;
  return {
    approval: waiting,
    ...(link ? { link } : {}),
    approver: personRef(approver.chatId, waiting.parties.approver.login),
    waitedMs:
      kit.waitedMs(a, waiting, zone) ?? a.createdAt.getTime() - waiting.request.createdAt.getTime(),
  };
}
