import type { Decision } from './approval-types.ts';

/** Whether the poller still asks the service about an approval. */
export type Tracking = 'active' | 'finished' | 'gave-up';

/** An approval this app started and follows, tied to the Slack message that announced it. */
export interface TrackedApproval {
  djbh: string;
  teamId: string;
  /** Where the request message is (or will be) posted: the command's channel, or the requester's DM. */
  channelId: string;
  /** The request message's ts: the thread every update goes to. Null until it is posted. */
  messageTs: string | null;
  requesterSlackId: string;
  requesterLogin: string;
  approverLogin: string;
  approverSlackId: string | null;
  title: string;
  note: string;
  decision: Decision;
  decidedBy: string | null;
  tracking: Tracking;
  /** Language of what the app writes in the thread, from the requester's Slack locale. */
  locale: string;
  createdAt: Date;
  updatedAt: Date;
  lastCheckedAt: Date | null;
  nextCheckAt: Date;
  checkFailures: number;
  remindersSent: number;
  lastRemindedAt: Date | null;
}

export type NewTrackedApproval = Omit<
  TrackedApproval,
  | 'messageTs'
  | 'decision'
  | 'decidedBy'
  | 'tracking'
  | 'updatedAt'
  | 'lastCheckedAt'
  | 'nextCheckAt'
  | 'checkFailures'
  | 'remindersSent'
  | 'lastRemindedAt'
>;

/**
 * Something the app owes Slack: the request message, the approver's DM, a thread reply, or the
 * refresh of the request message's status.
 * Written in the same transaction as the change it announces (an outbox), then delivered;
 * see announcement-dispatcher.ts for how a delivery is made exactly once.
 */
export type AnnouncementKind =
  | 'request'
  | 'approver-dm'
  | 'decision'
  | 'parent-update'
  | 'gave-up'
  /** A reminder DM to the approver, and its note in the thread. */
  | 'reminder'
  | 'reminder-note';

export interface Announcement {
  /** `<djbh>:<kind>[:<decision>]`: one announcement per fact, whoever records it. */
  id: string;
  djbh: string;
  kind: AnnouncementKind;
  decision: Decision | null;
  /** Which one, for kinds that happen more than once (the n-th reminder). */
  occurrence: number | null;
  state: 'pending' | 'sent' | 'failed';
  attempts: number;
  /** Set before each delivery attempt: if set on a pending one, an earlier attempt may have posted. */
  attemptedAt: Date | null;
  sentTs: string | null;
  lastError: string | null;
  createdAt: Date;
}

export function announcementId(
  djbh: string,
  kind: AnnouncementKind,
  detail?: Decision | number,
): string {
  return detail === undefined ? `${djbh}:${kind}` : `${djbh}:${kind}:${detail}`;
}
