import type { NewTrackedApproval } from '../../src/approvals/tracked-approval.ts';
import type { ApprovalStores } from '../../src/store/approval-stores.ts';
import type { Overrides } from './approval-builder.ts';
import { sampleApproval } from './outbox-seed.ts';

/**
 * An approval as reports read it, recorded through the store as the app records it: started at
 * `createdAt`, reminded, escalated, and decided (the decision seen at `seenAt` and its reply
 * posted two seconds later) when asked for.
 */
export async function seedReported(
  store: ApprovalStores,
  djbh: string,
  approval: Overrides<NewTrackedApproval> & { request: { createdAt: Date } },
  facts: {
    reminders?: number;
    escalatedTo?: { login: string; chatId: string };
    decided?: { decision: 'approved' | 'rejected'; by: string; seenAt: Date };
  } = {},
): Promise<void> {
  const start = approval.request.createdAt;
  await store.createApproval(sampleApproval(djbh, approval), start);
  for (let n = 1; n <= (facts.reminders ?? 0); n++)
    await store.recordReminder(djbh, n, new Date(start.getTime() + n * 60_000));
  if (facts.escalatedTo)
    await store.recordEscalation(djbh, {
      to: facts.escalatedTo,
      afterReminders: 0,
      answerWithinMs: 0,
      now: new Date(start.getTime() + 3_600_000),
    });
  const decided = facts.decided;
  if (!decided) return;
  await store.recordDecision(djbh, {
    decision: decided.decision,
    decidedBy: decided.by,
    ended: true,
    now: decided.seenAt,
    nextCheckAt: decided.seenAt,
  });
  const told = new Date(decided.seenAt.getTime() + 2000);
  const found = (await store.pendingAnnouncements(100_000)).find(
    (a) => a.id === `${djbh}:decision:${decided.decision}`,
  );
  const claim = found && (await store.claimAnnouncement(found, told, 60_000));
  if (!claim) throw new Error(`could not seed ${djbh}'s decision`);
  await store.markAnnouncementSent(claim, { channel: 'C1', ts: '1700000000.000100' }, told);
}
