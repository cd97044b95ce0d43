import type { AttemptClock, Posted } from '../../../approvals/announcer.ts';
import type { Announcement, TrackedApproval } from '../../../approvals/tracked-approval.ts';
import type { DeliveryKit } from '../delivery-kit.ts';

/**
 * Delivers one kind of announcement: where it goes, its fallback, what it says. Posts, edits and
 * audience checks go through the kit's poster; lookups of people through its readers.
 */
export type Handler = (
  a: Announcement,
  approval: TrackedApproval,
  attempt: AttemptClock,
  kit: DeliveryKit,
) => Promise<Posted>;
