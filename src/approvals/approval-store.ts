import type { Decision } from './approval-types.ts';
import type { Announcement, NewTrackedApproval, TrackedApproval } from './tracked-approval.ts';

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
}

/** Persistence as the domain needs it; implemented with Kysely in src/store. */
export interface ApprovalStore {
  /** Stores a new approval and the announcements of its request, in one transaction. */
  createApproval(approval: NewTrackedApproval, now: Date): Promise<void>;
  getApproval(djbh: string): Promise<TrackedApproval | undefined>;
  /**
   * Claims up to `limit` active approvals whose next check is due and that were not checked at
   * `now` already (one pass checks each once), for `leaseMs` on the database's clock, so that
   * another replica polling at the same moment skips them. A claim ends with
   * recordCheck/recordDecision/giveUp/finish, or runs out. Each approval comes with its claim
   * (`checkClaim`); given to those methods, it fences them: they record nothing (and answer
   * false) once another pass has claimed the approval.
   */
  claimDue(now: Date, limit: number, leaseMs: number): Promise<TrackedApproval[]>;
  /** A check that found nothing new (or failed): when to look again. Ends the claim. */
  recordCheck(
    djbh: string,
    check: {
      now: Date;
      nextCheckAt: Date;
      failed: boolean;
      /** The service answered that it does not know the number (kept until it knows it again). */
      unknown?: boolean;
    },
    claim?: string | null,
  ): Promise<boolean>;
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
    claim?: string | null,
  ): Promise<boolean>;
  /** Gives a claimed approval back unchecked (fenced by the claim), for the next pass to take. */
  releaseClaim(djbh: string, claim: string | null): Promise<void>;
  /** Stops following an approval nobody decided, with the announcement that says so. */
  giveUp(djbh: string, now: Date, claim?: string | null): Promise<boolean>;
  /** Announcements not yet delivered, oldest first (whether deliverable now or not). */
  pendingAnnouncements(limit: number): Promise<Announcement[]>;
  /**
   * What can be delivered now, at most one per lane (the lane's head), none from `skipLanes` and
   * none from a lane another attempt holds or whose pacing does not allow a post yet.
   * A lane is where posts queue behind each other: `post:<channel>` for the request's channel
   * (or thread), `edit:<channel>` for edits of the request message, `dm:<approver login>` for the
   * approver's DM, `requester:<user>` for what goes to the requester's DM because the request
   * message could not be posted, `own:<djbh>` for the rest (see announcement-rules.ts).
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
   */
  claimAnnouncement(
    announcement: Pick<Announcement, 'id' | 'attempts'>,
    now: Date,
    leaseMs: number,
    lane?: string,
    laneLookaheadMs?: number,
  ): Promise<AnnouncementClaim | undefined>;
  /**
   * Delivered; for the request message this also records where the thread is, and queues the
   * edit that adds the thread's link to the approver's DM. A delivery that found the approver
   * unreachable marks the approval so (the first time, with the announcement that tells the
   * requester). False (and nothing written) when the
   * claim is no longer the current attempt.
   */
  markAnnouncementSent(
    claim: AnnouncementClaim,
    posted: { channel: string; ts: string; approverUnreachable?: boolean },
    now: Date,
    /** How long the claim's lane waits before its next post (Slack's pace), fleet-wide. */
    laneWaitMs?: number,
  ): Promise<boolean>;
  /**
   * Stops delivery across the fleet (Slack refuses the app's token): `deliverable` returns nothing
   * on any replica until resumeDelivery. True when this call paused it (it was running).
   */
  pauseDelivery(reason: string, now: Date): Promise<boolean>;
  /** Lets delivery run again; true when it was paused. */
  resumeDelivery(): Promise<boolean>;
  /** Why and since when delivery is paused; undefined while it runs. */
  deliveryPause(): Promise<{ reason: string; since: Date } | undefined>;
  /** Not delivered this time; tried again from `nextAttemptAt`. Fenced like markAnnouncementSent. */
  markAnnouncementRetry(
    claim: AnnouncementClaim,
    retry: { error: string; uncertain: boolean; nextAttemptAt: Date },
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
  /**
   * Stops following an approval the service closed without a decision (`ended`) or no longer
   * knows (`vanished`), with the announcement that says so and the refresh of the request message.
   */
  finish(
    djbh: string,
    reason: 'ended' | 'vanished',
    now: Date,
    claim?: string | null,
  ): Promise<boolean>;
  /**
   * Records the n-th reminder with its two announcements (the approver's DM and the thread note)
   * in one transaction; recording the same occurrence again announces nothing new.
   */
  recordReminder(
    djbh: string,
    occurrence: number,
    now: Date,
    claim?: string | null,
  ): Promise<boolean>;
  /**
   * How many of an approval's reminders went unanswered at `now`: posted to the approver (not
   * merely recorded: one still queued, dropped, failed or posted to nobody was never seen) by an
   * attempt that started at least `answerWithinMs` before `now`, so that a reminder delivered late
   * still has its full time to be answered. What recordEscalation counts; cheap to ask first.
   */
  unansweredReminders(djbh: string, at: { now: Date; answerWithinMs: number }): Promise<number>;
  /**
   * Records that an approval was escalated, with its two announcements (the DM to `to` and the
   * note in the thread), in one transaction; `to` null records that nobody could be told (no
   * announcement). Only once per approval, and only while it is pending, followed, its approver
   * reachable, and at least `afterReminders` of its reminders went unanswered (unansweredReminders
   * with `answerWithinMs`): false, and nothing written, otherwise or when the claim is lost. The
   * announcements' occurrence is that count, the one the decision was made on: what the messages
   * say went unanswered.
   */
  recordEscalation(
    djbh: string,
    escalation: {
      to: { login: string; chatId: string } | null;
      afterReminders: number;
      answerWithinMs: number;
      now: Date;
    },
    claim?: string | null,
  ): Promise<boolean>;
  /** Open approvals waiting for this approver, newest first, and how many there are in all. */
  waitingFor(login: string, limit: number): Promise<Page>;
  /** Approvals this person requested, newest first, and how many there are in all. */
  requestedBy(login: string, limit: number): Promise<Page>;
}

export interface Page {
  approvals: TrackedApproval[];
  total: number;
}
