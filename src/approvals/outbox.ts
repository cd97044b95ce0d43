import type { Posted } from './announcer.ts';
import type { Announcement, TrackedApproval } from './tracked-approval.ts';

/** An announcement that can be delivered now, with its approval and its lane. */
export interface Deliverable {
  announcement: Announcement;
  approval: TrackedApproval;
  lane: string;
}

/** One attempt's hold on an announcement. */
export interface AnnouncementClaim {
  id: string;
  /** Unique per attempt: only the current attempt may record the outcome. */
  token: string;
  /** The lane the attempt holds with the same token, when it claimed one. */
  lane?: string;
  /**
   * How long the attempt must wait before its first call, for the lane's pace (on the database's
   * clock): a lane may be claimed a moment before its pace allows a post (`laneLookaheadMs`).
   */
  laneWaitMs?: number;
  /**
   * How long (database clock) Slack may still commit a post of an earlier attempt whose outcome
   * is unknown; 0 once that horizon has passed. Before it, a search that finds nothing proves
   * nothing: the attempt must not post.
   */
  commitHorizonLeftMs?: number;
}

/**
 * The announcements waiting to be delivered, one fenced attempt at a time, in lanes paced
 * fleet-wide. Implemented with Kysely in src/store.
 */
export interface Outbox {
  /** Announcements not yet delivered, oldest first (whether deliverable now or not). */
  pendingAnnouncements(limit: number): Promise<Announcement[]>;
  /**
   * What can be delivered now, at most one per lane (the lane's head), none from `skipLanes` and
   * none from a lane another attempt holds or whose pacing does not allow a post yet.
   * A lane is where posts queue behind each other: the conversation the announcement goes to,
   * as the domain resolved it when it was recorded (conversation.ts): `post:<channel>` for a
   * channel and its threads, `dm:<person>` for one person's DM whatever brings a message there,
   * `edit:<lane>` for edits of the request message, `own:<djbh>` for the rest.
   * Deliverable means: delivery is not paused, pending, due (`nextAttemptAt` ≤ now), not held by
   * another attempt, not waiting for the kinds its rule names, and no announcement of the same
   * approval recorded earlier in the same lane is still pending (replies and edits go out in the
   * order they were recorded).
   */
  deliverable(
    now: Date,
    options: {
      limit: number;
      skipLanes: Iterable<string>;
      /** Also lanes held by an attempt or waiting for their pace (to know whether to wait). */
      includeHeldLanes?: boolean;
      /** Also lanes whose pace allows a post within this many ms (see claimAnnouncement). */
      laneLookaheadMs?: number;
    },
  ): Promise<Deliverable[]>;
  /**
   * Claims a deliverable announcement for one attempt, for `leaseMs` measured on the database's
   * clock (replicas' own clocks may disagree). Succeeds only while the announcement is pending,
   * unheld and still at the attempt count it was read with. The claim's token fences what the
   * attempt may record later. With `lane`, the lane is claimed too, for the whole fleet: only
   * while no other attempt holds it and its pacing allows a post within `laneLookaheadMs`
   * (the claim's `laneWaitMs` says how long to wait before posting); recording the outcome
   * releases it (see `laneWaitMs` there). Claiming ahead of the pace takes the claim's own
   * database round trips out of the gap between two posts of a busy channel.
   * `commitHorizonMs`: when the previous attempt never recorded its outcome (it died, or lost its
   * lease in a hang), its post may be committed up to this long after its lease ended; the claim
   * says how much of that is left (`commitHorizonLeftMs`).
   */
  claimAnnouncement(
    announcement: Pick<Announcement, 'id' | 'attempts'>,
    now: Date,
    leaseMs: number,
    lane?: string,
    laneLookaheadMs?: number,
    commitHorizonMs?: number,
  ): Promise<AnnouncementClaim | undefined>;
  /**
   * Delivered, with what the delivery tells of the approval (lifecycle/deliveries.ts: the request
   * posted, the approver unreachable or found) applied as those events' transitions, in the same
   * transaction: for the request message, where the thread is and the edit that adds its link to
   * the approver's DM; for an approver found unreachable, the mark (the first time, with the
   * announcement that tells the requester). False (and nothing written) when the claim is no
   * longer the current attempt.
   */
  markAnnouncementSent(
    claim: AnnouncementClaim,
    posted: Posted,
    now: Date,
    /** How long the claim's lane waits before its next post (Slack's pace), fleet-wide. */
    laneWaitMs?: number,
  ): Promise<boolean>;
  /**
   * Not delivered this time; tried again from `nextAttemptAt`. Fenced like markAnnouncementSent.
   * `commitHorizonMs`: this attempt's own post may have been taken, and Slack may commit it up to
   * this long from now (database clock); no attempt posts again before that.
   */
  markAnnouncementRetry(
    claim: AnnouncementClaim,
    retry: { error: string; uncertain: boolean; nextAttemptAt: Date; commitHorizonMs?: number },
    /** How long the claim's lane waits (Retry-After), fleet-wide. */
    laneWaitMs?: number,
  ): Promise<boolean>;
  /** Not delivered and never will be (or not worth it any more). Fenced like markAnnouncementSent. */
  markAnnouncementFinal(
    claim: AnnouncementClaim,
    state: 'failed' | 'skipped',
    reason: string,
  ): Promise<boolean>;
  /** Where a delivered announcement was posted; undefined when it is not delivered or posted nothing. */
  sentPost(id: string): Promise<{ channel: string; ts: string } | undefined>;
  /** Failed announcements, newest first, for an operator. */
  failedAnnouncements(limit: number): Promise<Announcement[]>;
  /**
   * Makes failed announcements pending again, due now, with a fresh retry window; all of them
   * when `ids` is omitted. Their place in the recorded order does not change.
   */
  redriveAnnouncements(now: Date, ids?: string[]): Promise<number>;
}
