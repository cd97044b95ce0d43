import type { Kysely } from 'kysely';
import type { ApprovalSchedule } from '../../src/approvals/approval-repository.ts';
import type { Outbox } from '../../src/approvals/outbox.ts';
import type { NewTrackedApproval, TrackedApproval } from '../../src/approvals/tracked-approval.ts';
import { approvalStory } from '../../src/store/approval-story.ts';
import type { Database } from '../../src/store/schema.ts';
import { newApproval, type Overrides } from './approval-builder.ts';

/** What the store suites share: a moment, an approval around it, and a claim that holds nothing. */
export const T0 = new Date('2026-11-21T10:00:00Z');
export const NO_CLAIM = { id: '', token: '' };
export const later = (ms: number) => new Date(T0.getTime() + ms);

export function approval(
  djbh: string,
  overrides: Overrides<NewTrackedApproval> = {},
): NewTrackedApproval {
  return newApproval(
    {
      djbh,
      teamId: 'T0001',
      request: { title: '扩容 storage', note: 'For Q3', locale: 'zh-CN', createdAt: T0 },
      parties: {
        requester: { login: 'li.wei@corp.example', slackId: 'U2147483697' },
        approver: { login: 'maria.lopez@corp.example', slackId: 'U0MARIA' },
      },
      slack: { channelId: 'C2147483705' },
    },
    overrides,
  );
}

/** The pending announcement of this kind, as the dispatcher reads it before claiming. */
export async function pendingOf(store: Pick<Outbox, 'pendingAnnouncements'>, kind: string) {
  const found = (await store.pendingAnnouncements(100)).find((a) => a.kind === kind);
  if (!found) throw new Error(`no pending ${kind}`);
  return found;
}

/** When the poller looks at an approval next and how its checks went: the store's, beside it. */
export async function scheduleOf(
  db: Kysely<Database>,
  djbh: string,
): Promise<ApprovalSchedule | undefined> {
  return (await approvalStory(db, djbh))?.schedule;
}

/** An approval as recorded and its schedule, for assertions on both. */
export async function stored(
  db: Kysely<Database>,
  djbh: string,
): Promise<{ approval: TrackedApproval; schedule: ApprovalSchedule } | undefined> {
  const story = await approvalStory(db, djbh);
  return story && { approval: story.approval, schedule: story.schedule };
}
