import type { Decision } from './approval-types.ts';
import type { Handover } from './handover.ts';
import type { NewChain } from './steps.ts';
import type { NewTrackedApproval, TrackedApproval } from './tracked-approval.ts';

/**
 * When the poller looks at an approval next and how its checks went: the store's and the poller's,
 * kept beside the approval (TrackedApproval), not in it.
 */
export interface ApprovalSchedule {
  nextCheckAt: Date;
  lastCheckedAt: Date | null;
  /** Checks in a row that failed (the backoff of check-schedule.ts's nextCheckAfterFailure). */
  checkFailures: number;
  /**
   * Until when it is checked every few seconds: its approver followed a link to decide
   * (check-schedule.ts's HOT). Schedule, not follow-up: it only says how soon to look again.
   */
  hotUntil: Date | null;
}

/**
 * An approval a poll pass claimed (claimDue), with its schedule and the pass's claim: what the
 * pass records is fenced by the claim, so a pass that lost it records nothing and announces nothing.
 */
export interface ClaimedApproval {
  approval: TrackedApproval;
  schedule: ApprovalSchedule;
  claim: string | null;
}

/**
 * The approvals as the domain records them: each one and what its checks found. Each recording
 * method is an event of the lifecycle (lifecycle/events.ts): what changes, under which fence, and
 * which announcements it queues in the same transaction is the event's transition
 * (lifecycle/transition.ts); the store applies it and decides nothing. Implemented with Kysely in
 * src/store (apply-transition.ts).
 */
/** A check that found nothing new: when to look again, and whether the service knew the number. */
export interface UnchangedCheck {
  djbh: string;
  claim: string | null;
  nextCheckAt: Date;
  /** The service answered that it does not know the number (kept until it knows it again). */
  unknown: boolean;
}

export interface ApprovalRepository {
  /**
   * Stores a new approval and the announcements of its request, in one transaction; with
   * `chain`, the request's later steps too (steps.ts): the approval is their first step.
   */
  createApproval(approval: NewTrackedApproval, now: Date, chain?: NewChain): Promise<void>;
  getApproval(djbh: string): Promise<TrackedApproval | undefined>;
  /**
   * Claims up to `limit` active approvals whose next check is due and that were not checked at
   * `now` already (one pass checks each once), for `leaseMs` on the database's clock, so that
   * another replica polling at the same moment skips them. A claim ends with
   * recordCheck/recordDecision/giveUp/finish, or runs out. Each approval comes with its schedule
   * and its claim; given to those methods, it fences them: they record nothing (and answer
   * false) once another pass has claimed the approval.
   */
  claimDue(
    now: Date,
    limit: number,
    leaseMs: number,
    filter?: { hotOnly?: boolean },
  ): Promise<ClaimedApproval[]>;
  /**
   * Marks the approvals waiting for `approverLogin` (at most `atMost`, the newest) hot until
   * `until`, and due now: their approver went to decide (check-schedule.ts's HOT). Answers how
   * many were marked.
   */
  markHot(approverLogin: string, now: Date, until: Date, atMost: number): Promise<number>;
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
   * Several checks that found nothing new, recorded at once (one statement): each as
   * recordCheck with `failed: false`, fenced by its own claim. Answers those recorded, each with
   * the claim it held (one whose claim another pass took since records nothing). What a sweep
   * mostly writes, so batched.
   */
  recordChecks(
    checks: readonly UnchangedCheck[],
    now: Date,
  ): Promise<Array<{ djbh: string; claim: string | null }>>;
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
   * Records that the service gave the approval to someone else (handover.ts), as a check that
   * found nothing else new: the new approver (their chat account when `to` knows it, else none
   * until delivery finds it), their term, reminders counted from none (an escalation already made stays), with the
   * thread's note, their DM and the refresh of the request message, in one transaction; what was
   * still waiting to go out to the one before (their reminders, DMs, escalation) is dropped. Only
   * from `fromTerm` and while pending and followed: false, and nothing written, otherwise or when
   * the claim is lost, so two replicas (or a retried pass) that see the same handover record it
   * once. Ends the claim.
   */
  recordHandover(
    djbh: string,
    handover: Handover & { now: Date; nextCheckAt: Date },
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
   * How many of an approval's reminders went unanswered at `now`: posted to its current approver
   * (not the one before a handover; not
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
  /**
   * Open approvals waiting for this approver, or escalated to this person (their leader, asked to
   * act on it), newest first, and how many there are in all.
   */
  waitingFor(login: string, limit: number): Promise<Page>;
  /** Approvals this person requested, newest first, and how many there are in all. */
  requestedBy(login: string, limit: number): Promise<Page>;
  /**
   * Approvals this person requested that are still open (pending and followed), newest first, and
   * how many there are in all: found among all of them, however many closed ones are newer.
   */
  openRequestsBy(login: string, limit: number): Promise<Page>;
}

export interface Page {
  approvals: TrackedApproval[];
  total: number;
}
