import type { Outbox } from '../../src/approvals/outbox.ts';
import type { NewTrackedApproval } from '../../src/approvals/tracked-approval.ts';

/** What the store suites share: a moment, an approval around it, and a claim that holds nothing. */
export const T0 = new Date('2026-11-21T10:00:00Z');
export const NO_CLAIM = { id: '', token: '' };
export const later = (ms: number) => new Date(T0.getTime() + ms);

export function approval(
  djbh: string,
  overrides: Partial<NewTrackedApproval> = {},
): NewTrackedApproval {
  return {
    djbh,
    teamId: 'T0001',
    channelId: 'C2147483705',
    requesterSlackId: 'U2147483697',
    requesterLogin: 'li.wei@corp.example',
    approverLogin: 'maria.lopez@corp.example',
    approverSlackId: 'U0MARIA',
    title: '扩容 storage',
    note: 'For Q3',
    locale: 'zh-CN',
    createdAt: T0,
    ...overrides,
  };
}

/** The pending announcement of this kind, as the dispatcher reads it before claiming. */
export async function pendingOf(store: Pick<Outbox, 'pendingAnnouncements'>, kind: string) {
  const found = (await store.pendingAnnouncements(100)).find((a) => a.kind === kind);
  if (!found) throw new Error(`no pending ${kind}`);
  return found;
}
