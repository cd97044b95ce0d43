import type { Kysely } from 'kysely';
import type { ApprovalSchedule } from '../approvals/approval-repository.ts';
import type { Announcement, TrackedApproval } from '../approvals/tracked-approval.ts';
import { toAnnouncement, toApproval, toSchedule } from './rows.ts';
import type { Database } from './schema.ts';

/** One approval as recorded, its checks' schedule, and every announcement of it in recorded order. */
export interface ApprovalStory {
  approval: TrackedApproval;
  schedule: ApprovalSchedule;
  announcements: Announcement[];
}

/**
 * What the database knows of one approval, for the operator's `story` command; undefined when
 * the number is unknown (never started here, or purged by retention). Numbers are matched
 * exactly: the service's numbers are case-sensitive.
 */
export async function approvalStory(
  db: Kysely<Database>,
  djbh: string,
): Promise<ApprovalStory | undefined> {
  const row = await db
    .selectFrom('tracked_approvals')
    .selectAll()
    .where('djbh', '=', djbh)
    .executeTakeFirst();
  if (!row) return undefined;
  const announcements = await db
    .selectFrom('announcements')
    .selectAll()
    .where('djbh', '=', djbh)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return {
    approval: toApproval(row),
    schedule: toSchedule(row),
    announcements: announcements.map(toAnnouncement),
  };
}
