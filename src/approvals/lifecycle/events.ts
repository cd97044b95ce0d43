import type { Decision } from '../approval-types.ts';
import type { EscalationTarget } from '../escalation.ts';
import type { Handover } from '../handover.ts';

/**
 * Everything that happens to an approval and that the app reacts to, as data. Each is turned into
 * what changes, under which fence, with which announcements by one pure function
 * (transition.ts); the poller, the outbox and the listeners say what happened, the store applies
 * the answer and decides nothing.
 */
export type LifecycleEvent =
  /** The approval was started: its request message and the approver's DM. */
  | { kind: 'started' }
  /** Request again was used on this approval: `as` is the approval requested in its place. */
  | { kind: 'requested-again'; as: string }
  /**
   * A check found nothing new (still pending, or a number the service does not know), or failed:
   * when to look again.
   */
  | { kind: 'checked'; nextCheckAt: Date; failed: boolean; unknown?: boolean }
  /** A check found a decision the app had not recorded (`ended`: the service closed it too). */
  | {
      kind: 'decided';
      decision: Decision;
      decidedBy: string | null;
      ended: boolean;
      nextCheckAt: Date;
    }
  /**
   * A check found it closed without a decision (`ended`), or the service has not known the number
   * for long enough (`vanished`): no longer followed.
   */
  | { kind: 'closed'; reason: 'ended' | 'vanished' }
  /** Nobody decided within the time the app follows an approval: no longer followed. */
  | { kind: 'gave-up' }
  /** A check found the service naming another approver (handover.ts). */
  | { kind: 'handed-over'; handover: Handover; nextCheckAt: Date }
  /** The n-th reminder is due (reminders.ts says when). */
  | { kind: 'reminder-due'; occurrence: number }
  /**
   * Escalation is due by what was recorded (escalation.ts); the store verifies that
   * `afterReminders` reminders really went unanswered. `to` null: nobody above the approver.
   */
  | {
      kind: 'escalation-due';
      to: EscalationTarget | null;
      afterReminders: number;
      answerWithinMs: number;
    }
  /**
   * A delivery found the approver unreachable on the chat; `seq`: the delivered announcement's
   * place in the approval's record (said of the approver who had it then).
   */
  | { kind: 'approver-unreachable'; seq: number }
  /** A delivery looked up the chat account of an approver the service handed the approval to. */
  | { kind: 'approver-found'; seq: number; chatId: string }
  /** The request message was posted (maybe elsewhere than asked: the requester's DM). */
  | { kind: 'request-posted'; channel: string; ts: string }
  /** The request that replaced this one (Request again, `as`) was posted. */
  | { kind: 'request-again-posted'; as: string; channel: string; ts: string }
  /**
   * A chat account was linked to the approver's login (by them or an admin): whoever the
   * identities give for the login is reached from now on (person.ts).
   */
  | { kind: 'approver-linked'; chatId?: string }
  /** The link of `chatId` to the approver's login was removed (or moved to another login). */
  | { kind: 'approver-unlinked'; chatId: string }
  /**
   * Retention's daily purge (retention.ts): approvals that ended with no change since `before`
   * (`RETENTION_DAYS` ago) are removed.
   */
  | { kind: 'retention-due'; before: Date };

export type LifecycleEventKind = LifecycleEvent['kind'];

export type EventOf<K extends LifecycleEventKind> = Extract<LifecycleEvent, { kind: K }>;
