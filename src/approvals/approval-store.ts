import type { Decision } from './approval-types.ts';
import type { Announcement, NewTrackedApproval, TrackedApproval } from './tracked-approval.ts';

/** Persistence as the domain needs it; implemented with Kysely in src/store. */
export interface ApprovalStore {
  /** Stores a new approval and the announcements of its request, in one transaction. */
  createApproval(approval: NewTrackedApproval, now: Date): Promise<void>;
  getApproval(djbh: string): Promise<TrackedApproval | undefined>;
  /**
   * Claims up to `limit` active approvals whose next check is due, for `leaseMs`, so that another
   * replica polling at the same moment skips them. A claim ends with recordCheck/recordDecision/giveUp.
   */
  claimDue(now: Date, limit: number, leaseMs: number): Promise<TrackedApproval[]>;
  /** A check that found nothing new (or failed): when to look again. Ends the claim. */
  recordCheck(
    djbh: string,
    check: { now: Date; nextCheckAt: Date; failed: boolean },
  ): Promise<void>;
  /**
   * A new decision, stored together with the announcements that will post it and refresh the
   * request message, in one transaction:
   * a crash can lose neither, and recording the same decision twice announces it once.
   */
  recordDecision(
    djbh: string,
    change: {
      decision: Decision;
      decidedBy: string | null;
      ended: boolean;
      now: Date;
      nextCheckAt: Date;
    },
  ): Promise<void>;
  /** Stops following an approval nobody decided, with the announcement that says so. */
  giveUp(djbh: string, now: Date): Promise<void>;
  /** Announcements not yet delivered, oldest first. */
  pendingAnnouncements(limit: number): Promise<Announcement[]>;
  /**
   * Claims a pending announcement for one delivery attempt, for `leaseMs`, and notes the attempt.
   * False when it is no longer pending or another attempt holds it.
   */
  claimAnnouncement(id: string, now: Date, leaseMs: number): Promise<boolean>;
  /** Delivered; for the request message this also records where the thread is. */
  markAnnouncementSent(
    id: string,
    posted: { channel: string; ts: string },
    now: Date,
  ): Promise<void>;
  /** Not delivered; `final` stops further attempts. */
  markAnnouncementFailed(id: string, error: string, final: boolean): Promise<void>;
  /**
   * Records the n-th reminder with its two announcements (the approver's DM and the thread note)
   * in one transaction; recording the same occurrence again announces nothing new.
   */
  recordReminder(djbh: string, occurrence: number, now: Date): Promise<void>;
  /** Open approvals waiting for this approver, newest first, and how many there are in all. */
  waitingFor(login: string, limit: number): Promise<Page>;
  /** Approvals this person requested, newest first, and how many there are in all. */
  requestedBy(login: string, limit: number): Promise<Page>;
}

export interface Page {
  approvals: TrackedApproval[];
  total: number;
}
