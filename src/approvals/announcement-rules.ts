/**
 * How each kind of announcement is delivered, declared once as data. The store turns these rules
 * into its queries (which lane, what to wait for, in which order) and the dispatcher and announcer
 * read them (what to look for before posting again, where to go when the thread cannot be used),
 * so none of them names a kind. A new kind is a new entry here, plus what it says (the announcer's
 * message for it).
 */

/**
 * Where an announcement goes, as a role; conversation.ts resolves it to a conversation of a given
 * approval, which is its lane (one person's DM is one lane, whichever of these brings a message
 * there). Posts in one lane go out one at a time, spaced:
 * - `channel`: the request's channel (the request message itself);
 * - `thread`: the request's thread, in the request's channel; the requester's DM while there is no
 *   thread (the request message could not be posted);
 * - `request-message`: edits of the request message;
 * - `approver-dm`: the approver's DM with the app;
 * - `leader-dm`: the DM with the person an approval was escalated to (the approver's leader);
 * - `own`: a lane of its own per approval (a call that posts nothing anyone reads).
 */
export type LaneType =
  | 'channel'
  | 'thread'
  | 'request-message'
  | 'approver-dm'
  | 'leader-dm'
  | 'own';

/**
 * Where an announcement goes when its first place cannot take it:
 * - `requester-dm`: the requester's DM with the app (the channel or thread refuses posts);
 * - `tell-requester`: the approver cannot be reached on Slack: delivered as posting nothing, the
 *   approval is marked so (no reminders any more) and an `approver-unreachable` announcement
 *   tells the requester in the thread; an approver not on Slack at all is noted at once;
 * - `nothing`: posting nothing is a delivery (a reminder to nobody, a note with no thread).
 */
export type Fallback = 'requester-dm' | 'tell-requester' | 'nothing';

export interface AnnouncementRule {
  lane: LaneType;
  /** Not deliverable while an announcement of one of these kinds of the same approval is pending. */
  waitsFor: readonly AnnouncementKind[];
  fallback: Fallback;
  /**
   * True for edits and completions: doing one twice is harmless, so an attempt whose outcome is
   * unknown is simply done again. False for posts: the next attempt first looks for the post.
   */
  repeatable: boolean;
  /**
   * Dropped (`skipped`) when, by the time it goes out, the approval was decided or stopped, or its
   * approver proved unreachable (reminders): lifecycle/reminders.ts's stillWorthReminding, the
   * rule that decided the reminder, asked again.
   */
  onlyWhilePending: boolean;
  /**
   * What its message shows of the approval (audience.ts): `title-and-note` is only sent where
   * everyone who reads it may see the approval; `nothing` may go anywhere its lane goes.
   */
  carries: 'title-and-note' | 'nothing';
  /**
   * True for what is about the approval's current approver (their DM, its edits, their reminders,
   * that they cannot be reached; not the escalation, once per approval whoever has it): each approver the service gives the approval to
   * gets their own (its id names their term, handover.ts), and one still waiting to go out when
   * the approval is handed to someone else is dropped (`skipped`): it was the previous one's.
   */
  ofApprover?: boolean;
}

const post = { repeatable: false, onlyWhilePending: false } as const;
// Thread replies name people and decisions, never the title or the note; when the thread cannot
// be used they go to the requester's DM prefixed with the title, which the requester may see.
const inThread = {
  ...post,
  carries: 'nothing',
  lane: 'thread',
  waitsFor: ['request'],
  fallback: 'requester-dm',
} as const;

/**
 * Something the app owes Slack: the request message, the approver's DM, a thread reply, or the
 * refresh of the request message's status.
 */
export type AnnouncementKind =
  | 'request'
  | 'approver-dm'
  | 'decision'
  | 'gave-up'
  | 'ended'
  | 'vanished'
  | 'reminder'
  | 'reminder-note'
  /** Slack said the approver cannot be reached (deactivated, not found): the requester is told. */
  | 'approver-unreachable'
  /** Reminders went unanswered: the approver's leader gets one DM (see escalation.ts). */
  | 'escalation'
  /** Tells the requester in the thread that it was escalated, and to whom. */
  | 'escalation-note'
  /** The service gave the approval to someone else: said once in the thread (handover.ts). */
  | 'handed-over'
  | 'parent-update'
  | 'approver-dm-update'
  | 'step-complete'
  /** A step of a request in several steps was skipped (steps.ts): said in the thread. */
  | 'step-skipped'
  /** A step's start may or may not exist in the service: the thread says what to do. */
  | 'step-uncertain'
  /** A step could not be started: the request stops there, said in the thread. */
  | 'step-failed';

/** The rules, per kind. Lanes are ordered: within one approval, a lane delivers in recorded order. */
export const ANNOUNCEMENT_RULES: Readonly<Record<AnnouncementKind, AnnouncementRule>> = {
  request: {
    ...post,
    lane: 'channel',
    waitsFor: [],
    fallback: 'requester-dm',
    carries: 'title-and-note',
  },
  // Never waits for the thread: the approver hears at once; the link to the thread comes later.
  'approver-dm': {
    ...post,
    lane: 'approver-dm',
    waitsFor: [],
    fallback: 'tell-requester',
    carries: 'title-and-note',
    ofApprover: true,
  },
  decision: inThread,
  'gave-up': inThread,
  /** The service closed the approval without a decision (`isend` 1, still 待办). */
  ended: inThread,
  /** The service has not known the approval number for a day: we stop following it. */
  vanished: inThread,
  /** A reminder DM to the approver, and its note in the thread. */
  reminder: {
    ...post,
    lane: 'approver-dm',
    waitsFor: [],
    fallback: 'tell-requester',
    onlyWhilePending: true,
    carries: 'title-and-note',
    ofApprover: true,
  },
  // Says the reminder went, so it waits for it (and is dropped if the approver proved unreachable).
  'reminder-note': {
    ...inThread,
    waitsFor: ['request', 'reminder'],
    fallback: 'nothing',
    onlyWhilePending: true,
    ofApprover: true,
  },
  'approver-unreachable': { ...inThread, ofApprover: true },
  // Pointless once the approval is decided or ended, like a reminder. A leader who cannot be
  // reached gets nothing and nobody else is told instead (the note then says nothing either).
  escalation: {
    ...post,
    lane: 'leader-dm',
    waitsFor: [],
    fallback: 'nothing',
    onlyWhilePending: true,
    carries: 'title-and-note',
  },
  // Says the leader was told, so it waits for that DM, and says nothing unless it went out. Not
  // dropped by a decision that came after the DM: what the leader read, the requester may know.
  'escalation-note': { ...inThread, waitsFor: ['request', 'escalation'] },
  // Names who had it and who has it now, in the thread: nothing a reader of the thread could not
  // know (the request message shows the approver). Said even when decided meanwhile: it happened.
  'handed-over': inThread,
  /** The request message, edited to show the latest state (an edit always shows the latest). */
  'parent-update': {
    lane: 'request-message',
    waitsFor: ['request'],
    fallback: 'nothing',
    repeatable: true,
    onlyWhilePending: false,
    carries: 'title-and-note',
  },
  /** The approver's DM, edited to show the decision (or the thread's link). */
  'approver-dm-update': {
    lane: 'approver-dm',
    waitsFor: ['approver-dm'],
    fallback: 'nothing',
    repeatable: true,
    onlyWhilePending: false,
    carries: 'title-and-note',
    ofApprover: true,
  },
  /** The Workflow Builder step that started the approval, completed with its outcome. */
  'step-complete': {
    lane: 'own',
    waitsFor: [],
    fallback: 'nothing',
    repeatable: true,
    onlyWhilePending: false,
    // Its outputs (number, decision, who decided) go to the workflow that asked for it.
    carries: 'nothing',
  },
  // Named by the step's position (occurrence); they name people and steps, never the title.
  'step-skipped': inThread,
  'step-uncertain': inThread,
  'step-failed': inThread,
};

export const ANNOUNCEMENT_KINDS = Object.keys(ANNOUNCEMENT_RULES) as AnnouncementKind[];

export function ruleOf(kind: AnnouncementKind): AnnouncementRule {
  return ANNOUNCEMENT_RULES[kind];
}
