import { AnnounceError, type AttemptClock } from '../../../approvals/announcer.ts';
import {
  DIGEST_LISTED,
  DIGEST_SCAN,
  type EarlierReminder,
  reminderDelivery,
} from '../../../approvals/reminder-digest.ts';
import type { Announcement, TrackedApproval } from '../../../approvals/tracked-approval.ts';
import { isKnownTimeZone, sameLocalDay, zoneOrDefault } from '../../../approvals/working-hours.ts';
import type { DeliveryKit } from '../delivery-kit.ts';
import type { Reader } from '../poster.ts';

/*
 * One DM a day per reader for announcements that several approvals raise at once (reminders to an
 * approver, escalations to a leader): reminder-digest.ts decides whether this one goes alone, as
 * the day's digest, or inside a digest already posted; this reads what it needs to decide.
 */

/** How one announcement reaches its reader, with the digest's list when it is the digest. */
export type DayDelivery =
  | { as: 'single' }
  | { as: 'covered'; by: { channel: string; ts: string } }
  | { as: 'digest'; approvals: TrackedApproval[]; total: number };

export interface DayDigestInput {
  a: Announcement;
  reader: Reader;
  /** The reader's time zone (Slack's): their day is the digest's day. */
  timeZone: string | undefined;
  /** The last DM of this kind posted to the reader. */
  earlier: () => Promise<EarlierReminder | undefined>;
  /**
   * Whether a DM of this kind to the reader, recorded before this one, may have been posted
   * without the app knowing (Slack took it, its answer was lost): it may be the digest listing
   * this one, so this waits until that is known rather than post a second digest.
   */
  unsettled?: () => Promise<boolean>;
  /** Which of the approvals the store finds waiting on the reader this kind lists (reminder-digest.ts). */
  entries: (waiting: readonly TrackedApproval[], login: string) => TrackedApproval[];
}

export async function dayDelivery(
  kit: DeliveryKit,
  attempt: AttemptClock,
  input: DayDigestInput,
): Promise<DayDelivery> {
  const { timeZone } = input;
  const hours = kit.options.workingHours;
  const zone = hours
    ? zoneOrDefault(timeZone, hours)
    : timeZone && isKnownTimeZone(timeZone)
      ? timeZone
      : 'UTC';
  if (await input.unsettled?.())
    throw new AnnounceError('an earlier DM to this reader may have been posted; waiting to know', {
      retryable: true,
    });
  const [earlier, page] = await Promise.all([
    input.earlier(),
    listedFor(kit, attempt, input.reader, input.entries),
  ]);
  const how = reminderDelivery({
    recordedAt: input.a.createdAt,
    waiting: page.total,
    earlier,
    sameDay: (x, y) => sameLocalDay(x, y, zone),
  });
  return how.as === 'digest' ? { as: 'digest', ...page } : how;
}

/**
 * What a digest to `reader` lists: the approvals `entries` keeps of those the store finds for
 * them, each checked on its own against who may see it (a list is as private as its most private
 * item). An approval whose check is unsure is left out: a list is never the place to fail open.
 */
async function listedFor(
  kit: DeliveryKit,
  attempt: AttemptClock,
  reader: Reader,
  entries: DayDigestInput['entries'],
): Promise<{ approvals: TrackedApproval[]; total: number }> {
  const digest = kit.options.digest;
  if (!digest) return { approvals: [], total: 0 };
  attempt.check();
  const page = await digest.waitingFor(reader.login, DIGEST_SCAN);
  const shown = await Promise.all(page.approvals.map((w) => kit.poster.mayShow(reader, w)));
  const listed = entries(
    page.approvals.filter((_, i) => shown[i]),
    reader.login,
  );
  // Beyond what was read, counted as the store counts them: still waiting, not yet checked.
  const unread = Math.max(0, page.total - page.approvals.length);
  return { approvals: listed.slice(0, DIGEST_LISTED), total: listed.length + unread };
}
