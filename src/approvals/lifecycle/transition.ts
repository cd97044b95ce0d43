import type { AnnouncementKind } from '../announcement-rules.ts';
import type { Decision } from '../approval-types.ts';
import type { EscalationTarget } from '../escalation.ts';
import { type Person, sameLogin } from '../person.ts';
import { afterStep, type ChainEffect, type StepOfChain, type StepOutcome } from '../steps.ts';
import type { Approver, SlackAddress, Tracking } from '../tracked-approval.ts';
import type { EventOf, LifecycleEvent, LifecycleEventKind } from './events.ts';

/**
 * What a transition reads of the approval: what it was when the event happened (read by the
 * store in the transaction that applies it, or the claimed row a check holds), plus facts only
 * the record of its announcements can tell (`Facts`, measured by the store when the event asks).
 */
export interface LifecycleApproval {
  djbh: string;
  slack: Pick<SlackAddress, 'channelId' | 'threadTs' | 'functionExecutionId'>;
  parties: {
    approver: Pick<Approver, 'login' | 'slackId' | 'term'> & { unreachableSince?: Date | null };
    formerApprovers: readonly Person[];
  };
  request?: { againOf?: { djbh: string } | null };
}

/** Facts of an approval's announcements a transition may need; see FACTS_NEEDED. */
export interface Facts {
  /** The current approver's DM went out with a post (they were shown the approval). */
  approverShown?: boolean;
  /** Reminders the current approver left unanswered (escalation.ts), counted at `now`. */
  unansweredReminders?: number;
  /** The approval is a step of a request in several steps (steps.ts): which. */
  step?: StepOfChain;
}

/** The facts each event needs measured before its transition; none for the others. */
export const FACTS_NEEDED: Partial<Record<LifecycleEventKind, readonly (keyof Facts)[]>> = {
  'handed-over': ['approverShown'],
  'escalation-due': ['unansweredReminders'],
  decided: ['step'],
  closed: ['step'],
  'gave-up': ['step'],
};

/**
 * What changes of the approval, in the domain's words; absent fields stay as they are. The
 * store maps each to its columns and writes them in one statement.
 */
export interface ApprovalChange {
  decision?: Decision;
  decidedBy?: string | null;
  tracking?: Tracking;
  /** When something people see changed (a check that found nothing new leaves it). */
  updatedAt?: Date;
  lastCheckedAt?: Date;
  nextCheckAt?: Date;
  /** The check's claim on it ends (its lease is given back). */
  endsClaim?: true;
  checkFailures?: number | 'one-more';
  /** `keptOr`: since when it was first unknown, or this moment if it was known until now. */
  unknownSince?: Date | null | { keptOr: Date };
  /**
   * A new approver, in their own term: what is recorded from here on (announcements' order) is
   * theirs.
   */
  approver?: {
    login: string;
    chatId: string | null;
    term: number;
    since: Date;
    formerApprovers: readonly Person[];
  };
  approverSlackId?: string | null;
  remindersSent?: number;
  lastRemindedAt?: Date | null;
  approverUnreachableSince?: Date | null;
  escalatedAt?: Date;
  escalatedTo?: EscalationTarget | null;
  /** Where the request message is now; `threadTs` the thread it joined, if it is still there. */
  requestMessage?: { channelId: string; messageTs: string; threadTs: string | null };
  requestedAgainAs?: string;
  requestedAgainMessage?: { channelId: string; ts: string };
}

/**
 * What must still hold when the change is written, or nothing is (the transition is refused and
 * its caller told false): each item a condition on the approval's row the store verifies in the
 * same statement, so two replicas (or a retried pass) that see the same event record it once.
 */
export type FenceItem =
  /** The poll pass's claim on it is still the current one (claimDue). */
  | { kind: 'claim-held'; claim: string }
  /** Pending and followed. */
  | { kind: 'open' }
  /** Still with the approver of this term (handover.ts). */
  | { kind: 'approver-term'; term: number }
  /** Handed over at least once. */
  | { kind: 'handed-over' }
  /** Its current approver got it before the announcement numbered `seq` was recorded. */
  | { kind: 'approver-before'; seq: number }
  | { kind: 'approver-account-unknown' }
  | { kind: 'approver-reachable' }
  | { kind: 'not-escalated' }
  /**
   * At least `atLeast` reminders posted to the current approver by an attempt that started
   * `answerWithinMs` or more before `now` (counted by the store in SQL).
   */
  | { kind: 'unanswered-reminders'; atLeast: number; answerWithinMs: number; now: Date }
  /** Its approver is the person with this login (compared as person.ts compares logins). */
  | { kind: 'approver-login'; login: string }
  /** It records this chat account for its approver. */
  | { kind: 'approver-account'; chatId: string }
  | { kind: 'not-requested-again' }
  | { kind: 'requested-again-as'; djbh: string }
  /** No longer followed (ENDED_TRACKING). */
  | { kind: 'ended' }
  /** Nothing people see changed since `before`. */
  | { kind: 'unchanged-since'; before: Date }
  /** None of its announcements still waits to go out or failed (an operator may re-drive it). */
  | { kind: 'announcements-settled' }
  /** Not requested again, or its Request again is no longer followed (or no longer kept). */
  | { kind: 'request-again-ended' };

/**
 * One announcement to record with the change, named by the fact it tells (tracked-approval.ts's
 * announcementId: its decision, occurrence or detail). Its lane is resolved by the domain's rule
 * (conversation.ts) from the approval as changed.
 */
export interface AnnouncementToRecord {
  kind: AnnouncementKind;
  decision?: Decision;
  occurrence?: number;
  detail?: string;
}

export interface Transition {
  change: ApprovalChange;
  fence: readonly FenceItem[];
  announcements: readonly AnnouncementToRecord[];
  /**
   * What still waited to go out to the approver before (their rule's `ofApprover`) is dropped:
   * it was theirs, not the new approver's.
   */
  dropsEarlierApproversAnnouncements?: true;
  /** Where its messages go changed: its pending announcements take their lanes again. */
  relanes?: true;
  /**
   * What the approval's chain records (steps.ts's afterStep): the step's outcome and the next
   * step due, a durable intention a worker acts on (step-starter.ts), or the chain's end.
   */
  chain?: ChainEffect;
  /** Events for other approvals that follow from this one, in the same transaction. */
  follows?: ReadonlyArray<{ djbh: string; event: LifecycleEvent }>;
  /**
   * The approval is removed with its announcements instead of changed (retention): the store
   * selects every approval the fence holds for, a batch at a time (store/retention-store.ts).
   */
  removes?: true;
}

/** An approval in one of these is no longer followed: it ended. */
export const ENDED_TRACKING: readonly Tracking[] = ['finished', 'gave-up'];

/** When and under which claim a transition is applied. */
export interface At {
  now: Date;
  /** The poll pass's claim it holds (claimDue), if the event came from a check. */
  claim?: string | null;
}

type Rule<K extends LifecycleEventKind> = (
  approval: LifecycleApproval,
  event: EventOf<K>,
  at: At,
  facts: Facts,
) => Transition;

const claimed = (at: At): FenceItem[] =>
  at.claim ? [{ kind: 'claim-held', claim: at.claim }] : [];

/** A check's end: when to look again, and the claim given back. */
const checkEnds = (now: Date, nextCheckAt: Date): ApprovalChange => ({
  lastCheckedAt: now,
  nextCheckAt,
  endsClaim: true,
  checkFailures: 0,
});

/**
 * The workflow step that started the approval (if one did) is owed its outcome once it ends; one
 * that started a request in several steps, once the request ends (the chain's store records it
 * then, store/chain-store.ts), not when its first step does.
 */
const stepCompletion = (approval: LifecycleApproval, facts: Facts): AnnouncementToRecord[] =>
  approval.slack.functionExecutionId && !facts.step ? [{ kind: 'step-complete' }] : [];

/** What a step's outcome means for its chain, when the approval is a step of one. */
const chainOf = (facts: Facts, outcome: StepOutcome, decidedBy: string | null) => {
  const effect = facts.step ? afterStep(facts.step, outcome, decidedBy) : undefined;
  return effect ? { chain: effect } : {};
};

/** An approval no longer followed: its thread says why and the request message shows it. */
function stopsFollowing(
  approval: LifecycleApproval,
  tracking: Tracking,
  why: 'ended' | 'vanished' | 'gave-up',
  at: At,
  facts: Facts,
): Transition {
  return {
    // Ended without a decision: a chain stops there (no later step starts).
    ...chainOf(facts, why, null),
    change: { tracking, updatedAt: at.now, endsClaim: true },
    fence: claimed(at),
    announcements: [
      { kind: why },
      { kind: 'parent-update', detail: why },
      ...stepCompletion(approval, facts),
    ],
  };
}

/**
 * The former approvers a handover records: those the approval was shown to in their own DM, who
 * keep seeing it (WHO_MAY's `former-approver`). The approver it is taken from joins them only if
 * their DM went out in their term (or they were shown it in an earlier one): one handed on before
 * it went out, or never reachable on the chat, was shown nothing and gains nothing.
 */
export function formerWhoWereShown(
  approval: LifecycleApproval,
  fromTerm: number,
  former: readonly Person[],
  approverShown: boolean,
): readonly Person[] {
  if (approval.parties.approver.term !== fromTerm) return former;
  const outgoing = approval.parties.approver.login;
  if (approval.parties.formerApprovers.some((p) => sameLogin(p.login, outgoing))) return former;
  return approverShown ? former : former.filter((p) => !sameLogin(p.login, outgoing));
}

/**
 * Retention's rule, which reads no approval: every approval its fence holds for goes, with its
 * announcements, and nobody is told (the thread has long said how it ended). Kept: one still
 * followed, changed since `before`, with an announcement still to deliver or failed, and one
 * whose Request again is still followed, whose posting must still reach it (request-again-posted)
 * and which its requester may still use as the new request's origin.
 */
export function retentionTransition({ before }: EventOf<'retention-due'>): Transition {
  return {
    change: {},
    fence: [
      { kind: 'ended' },
      { kind: 'unchanged-since', before },
      { kind: 'announcements-settled' },
      { kind: 'request-again-ended' },
    ],
    removes: true,
    announcements: [],
  };
}

/** Each event's transition: the compiler checks every event has one. */
const RULES: { [K in LifecycleEventKind]: Rule<K> } = {
  started: (approval) => ({
    change: {},
    fence: [],
    // Numbered in this order: the request, then the approver's DM.
    announcements: [{ kind: 'request' }, { kind: 'approver-dm' }],
    // Request again is used up: the old request message drops its button at once, and links to
    // the new one once that is posted (request-again-posted).
    follows: approval.request?.againOf
      ? [
          {
            djbh: approval.request.againOf.djbh,
            event: { kind: 'requested-again', as: approval.djbh },
          },
        ]
      : [],
  }),

  'requested-again': (_approval, { as }, { now }) => ({
    change: { requestedAgainAs: as, updatedAt: now },
    fence: [{ kind: 'not-requested-again' }],
    announcements: [{ kind: 'parent-update', detail: `again:${as}` }],
  }),

  checked: (_approval, { nextCheckAt, failed, unknown }, at) => ({
    change: {
      lastCheckedAt: at.now,
      nextCheckAt,
      endsClaim: true,
      checkFailures: failed ? 'one-more' : 0,
      // A failed check says nothing about whether the service knows the number.
      ...(failed ? {} : { unknownSince: unknown ? { keptOr: at.now } : null }),
    },
    fence: claimed(at),
    announcements: [],
  }),

  // Recording the same decision twice announces it once (the announcements' ids name it).
  // A step of a chain: approved, its next step is due (started by step-starter.ts); rejected,
  // the chain ends. Once: the chain's store records a step's outcome only while it is started.
  decided: (approval, { decision, decidedBy, ended, nextCheckAt }, at, facts) => ({
    ...chainOf(facts, decision, decidedBy),
    change: {
      decision,
      decidedBy,
      tracking: ended ? 'finished' : 'active',
      updatedAt: at.now,
      ...checkEnds(at.now, nextCheckAt),
    },
    fence: claimed(at),
    announcements: [
      { kind: 'decision', decision },
      { kind: 'parent-update', decision },
      { kind: 'approver-dm-update', decision },
      ...(ended ? stepCompletion(approval, facts) : []),
    ],
  }),

  closed: (approval, { reason }, at, facts) =>
    stopsFollowing(approval, 'finished', reason, at, facts),

  'gave-up': (approval, _event, at, facts) =>
    stopsFollowing(approval, 'gave-up', 'gave-up', at, facts),

  'handed-over': (approval, { handover, nextCheckAt }, at, facts) => {
    const term = handover.fromTerm + 1;
    const former = formerWhoWereShown(
      approval,
      handover.fromTerm,
      handover.former,
      facts.approverShown ?? false,
    );
    return {
      change: {
        approver: { ...handover.to, term, since: at.now, formerApprovers: former },
        // They were never reminded, may well be reachable, and left nothing unanswered. An
        // escalation already made stays: once per approval, and its leader was sent its title.
        remindersSent: 0,
        lastRemindedAt: null,
        approverUnreachableSince: null,
        updatedAt: at.now,
        ...checkEnds(at.now, nextCheckAt),
        unknownSince: null,
      },
      // Once per handover: whoever records it first moves the term on, the rest no-op.
      fence: [{ kind: 'approver-term', term: handover.fromTerm }, { kind: 'open' }, ...claimed(at)],
      dropsEarlierApproversAnnouncements: true,
      announcements: [
        { kind: 'handed-over', occurrence: term },
        { kind: 'approver-dm' },
        { kind: 'parent-update', detail: `handed-over:${term}` },
      ],
    };
  },

  'reminder-due': (_approval, { occurrence }, at) => ({
    change: { remindersSent: occurrence, lastRemindedAt: at.now, updatedAt: at.now },
    fence: claimed(at),
    announcements: [
      { kind: 'reminder', occurrence },
      { kind: 'reminder-note', occurrence },
    ],
  }),

  // Once per approval; the messages say how many went unanswered: the count it was decided on
  // (it only grows: a delivered reminder stays delivered).
  'escalation-due': (_approval, { to, afterReminders, answerWithinMs }, at, facts) => {
    const unanswered = facts.unansweredReminders ?? 0;
    return {
      change: { escalatedAt: at.now, escalatedTo: to, updatedAt: at.now },
      fence: [
        { kind: 'unanswered-reminders', atLeast: afterReminders, answerWithinMs, now: at.now },
        { kind: 'not-escalated' },
        { kind: 'open' },
        { kind: 'approver-reachable' },
        ...claimed(at),
      ],
      // Nobody above the approver: recorded (never tried again), nobody told.
      announcements: to
        ? [
            { kind: 'escalation', occurrence: unanswered },
            { kind: 'escalation-note', occurrence: unanswered },
          ]
        : [],
    };
  },

  // The first time only, for each approver it is handed to: the requester is told once, and the
  // request message offers Request again now (request-again.ts).
  'approver-unreachable': (approval, { seq }, { now }) => ({
    change: { approverUnreachableSince: now, updatedAt: now },
    fence: [{ kind: 'approver-reachable' }, { kind: 'approver-before', seq }],
    announcements: [
      { kind: 'approver-unreachable' },
      {
        kind: 'parent-update',
        detail:
          approval.parties.approver.term > 0
            ? `approver-unreachable@${approval.parties.approver.term}`
            : 'approver-unreachable',
      },
    ],
  }),

  // Recorded, so that what follows goes to their DM's lane; the request message names them by
  // their chat account now.
  'approver-found': (approval, { seq, chatId }, { now }) => ({
    change: { approverSlackId: chatId, updatedAt: now },
    fence: [
      { kind: 'approver-account-unknown' },
      { kind: 'handed-over' },
      { kind: 'approver-before', seq },
    ],
    relanes: true,
    announcements: [
      { kind: 'parent-update', detail: `approver-found@${approval.parties.approver.term}` },
    ],
  }),

  'request-posted': (approval, { channel, ts }, { now }) => ({
    change: {
      requestMessage: {
        channelId: channel,
        messageTs: ts,
        // Posted somewhere else than asked (the DM): the thread it was to join is not there.
        threadTs: approval.slack.channelId === channel ? approval.slack.threadTs : null,
      },
      updatedAt: now,
    },
    fence: [],
    // What waited in the requester's DM for the thread goes to the thread (or stays in the DM).
    relanes: true,
    // The approver's DM did not wait for the thread; now it can link to it.
    announcements: [{ kind: 'approver-dm-update', detail: 'thread' }],
    follows: approval.request?.againOf
      ? [
          {
            djbh: approval.request.againOf.djbh,
            event: { kind: 'request-again-posted', as: approval.djbh, channel, ts },
          },
        ]
      : [],
  }),

  // Reachable again: its reminders (and escalation) resume and the request message drops Request
  // again, named by when, so a mark set again later and cleared again edits it again. The account
  // recorded for the approver becomes the linked one, for a previous release that still
  // addresses by it during a rolling deploy (this one asks the identities as each message goes).
  'approver-linked': (approval, { chatId }, { now }) => {
    const unreachable = approval.parties.approver.unreachableSince != null;
    return {
      change: {
        ...(chatId ? { approverSlackId: chatId } : {}),
        ...(unreachable ? { approverUnreachableSince: null, updatedAt: now } : {}),
      },
      fence: [{ kind: 'open' }, { kind: 'approver-login', login: approval.parties.approver.login }],
      announcements: unreachable
        ? [{ kind: 'parent-update', detail: `approver-linked-${now.getTime()}` }]
        : [],
    };
  },

  // Stops recording the account, for a previous release that still addresses by it.
  'approver-unlinked': (approval, { chatId }) => ({
    change: { approverSlackId: null },
    fence: [
      { kind: 'open' },
      { kind: 'approver-login', login: approval.parties.approver.login },
      { kind: 'approver-account', chatId },
    ],
    announcements: [],
  }),

  'request-again-posted': (_approval, { as, channel, ts }, { now }) => ({
    change: { requestedAgainMessage: { channelId: channel, ts }, updatedAt: now },
    fence: [{ kind: 'requested-again-as', djbh: as }],
    announcements: [{ kind: 'parent-update', detail: `again-posted:${as}` }],
  }),

  'retention-due': (_approval, event) => retentionTransition(event),
};

/**
 * What `event` means for `approval` at `at.now`: what changes, the fence the change needs, and
 * the announcements it records. Pure: no chat, SQL or HTTP; `facts` are those FACTS_NEEDED names.
 */
export function transition(
  approval: LifecycleApproval,
  event: LifecycleEvent,
  at: At,
  facts: Facts = {},
): Transition {
  const rule = RULES[event.kind] as Rule<typeof event.kind>;
  return rule(approval, event as never, at, facts);
}
