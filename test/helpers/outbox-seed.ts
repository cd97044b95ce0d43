import type { NewTrackedApproval } from '../../src/approvals/tracked-approval.ts';
import type { ApprovalStores } from '../../src/store/approval-stores.ts';
import { newApproval, type Overrides } from './approval-builder.ts';

/** An approval as tests and benchmarks need one, with only what matters to them given. */
export function sampleApproval(
  djbh: string,
  overrides: Overrides<NewTrackedApproval> = {},
): NewTrackedApproval {
  return newApproval(
    {
      djbh,
      teamId: 'T1',
      request: { title: 't', note: 'n', locale: 'en-US', createdAt: new Date() },
      parties: {
        requester: { login: 'a@corp.example', slackId: 'U1' },
        approver: { login: 'b@corp.example', slackId: null },
      },
      slack: { channelId: 'C1' },
    },
    overrides,
  );
}

/**
 * Puts an approval in the store as an earlier run would have left it: its request message
 * already posted (or failed for good), its approver told long ago. For tests and benchmarks that
 * need many approvals at once, which through Slack would take a second each.
 */
export async function seedApproval(
  store: ApprovalStores,
  approval: NewTrackedApproval,
  request: { posted: { channel: string; ts: string } } | { failed: string },
): Promise<void> {
  const now = approval.request.createdAt;
  // Recorded as if an hour ahead, so that a running app's delivery leaves the rows alone until
  // they are in their final state; the check schedule is put back to now after.
  await store.createApproval(approval, new Date(now.getTime() + 3_600_000));
  const claim = async (kind: string) => {
    const found = (await store.pendingAnnouncements(100_000)).find(
      (a) => a.id === `${approval.djbh}:${kind}`,
    );
    const claimed = found && (await store.claimAnnouncement(found, now, 60_000));
    if (!claimed) throw new Error(`could not seed ${approval.djbh}:${kind}`);
    return claimed;
  };
  if ('posted' in request)
    await store.markAnnouncementSent(await claim('request'), request.posted, now);
  else await store.markAnnouncementFinal(await claim('request'), 'failed', request.failed);
  await store.markAnnouncementFinal(await claim('approver-dm'), 'skipped', 'seeded: told long ago');
  await store.recordCheck(approval.djbh, { now, nextCheckAt: now, failed: false });
}
