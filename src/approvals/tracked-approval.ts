import { type AnnouncementKind, ruleOf } from './announcement-rules.ts';
import type { Decision } from './approval-types.ts';
import type { Person } from './person.ts';

/** Whether the poller still asks the service about an approval. */
export type Tracking = 'active' | 'finished' | 'gave-up';

/**
 * An approval this app started and follows, tied to the Slack message that announced it, grouped
 * by what belongs together. When the poller looks at it next, and under which claim, is the
 * store's (approval-repository.ts's ApprovalSchedule and ClaimedApproval), not the approval's.
 */
export interface TrackedApproval {
  djbh: string;
  teamId: string;
  request: ApprovalRequestRecord;
  parties: Parties;
  outcome: ApprovalOutcome;
  followUp: FollowUp;
  slack: SlackAddress;
}

/** What was asked, in which words, and what it came from. */
export interface ApprovalRequestRecord {
  title: string;
  note: string;
  /** Language of what the app writes in the thread, from the requester's Slack locale. */
  locale: string;
  createdAt: Date;
  /** The channel template the request was made from (Request again offers the same one); null otherwise. */
  template: { id: string | null; name: string } | null;
  /**
   * The approval this one was requested again from ("Request again"), with the permalink of its
   * request message when Slack gave one; null otherwise.
   */
  againOf: { djbh: string; link: string | null } | null;
  /**
   * The approval that requested this one again, once one did (Request again is then used up), and
   * its request message once posted (linked from this one's); null otherwise.
   */
  requestedAgainAs: {
    djbh: string;
    message: { channelId: string; ts: string } | null;
  } | null;
}

/** Who asked, who is asked now, and who was asked before. */
export interface Parties {
  requester: { login: string; slackId: string };
  approver: Approver;
  /**
   * Who had it before the current approver, oldest first (handover.ts); empty while it was never
   * handed over. They were sent its title and note in their DM, so they may still see it.
   */
  formerApprovers: Person[];
}

/** The current approver: the one it was requested from, or whom the service gave it to since. */
export interface Approver {
  login: string;
  slackId: string | null;
  /**
   * How many times the service gave the approval to someone else (handover.ts); 0 while it is
   * with the approver it was requested from. What the current approver is told and reminded of is
   * theirs alone: named with this term.
   */
  term: number;
  /** When the current approver got it; null while it is with the one it was requested from. */
  since: Date | null;
  /**
   * Since when Slack has said the approver cannot be reached (deactivated, not found): the
   * requester was told, and no reminders go to them. Null while reachable.
   */
  unreachableSince: Date | null;
}

/** What the service said of it, and whether the app still follows it. */
export interface ApprovalOutcome {
  decision: Decision;
  decidedBy: string | null;
  tracking: Tracking;
  /** Since when the service has answered that it does not know this number; null while it knows it. */
  unknownSince: Date | null;
  /**
   * When the lifecycle last changed what people see of it (a check that found nothing new leaves
   * it): once it ended, when it did (step-outcome.ts).
   */
  changedAt: Date;
}

/** The reminders and the escalation it got. */
export interface FollowUp {
  remindersSent: number;
  lastRemindedAt: Date | null;
  /**
   * When the approval was escalated to the approver's leader (escalation.ts); null until then.
   * Set once: it is never escalated again, whether or not someone could be told.
   */
  escalatedAt: Date | null;
  /** Who it was escalated to; null when it was not, or when nobody above the approver could be. */
  escalatedTo: { login: string; chatId: string } | null;
}

/** Where it lives on Slack. */
export interface SlackAddress {
  /** Where the request message is (or will be) posted: the command's channel, or the requester's DM. */
  channelId: string;
  /** The request message's ts. Null until it is posted. */
  messageTs: string | null;
  /**
   * The thread the request was asked to go into (a message shortcut's message), or null when the
   * request starts its own thread. Cleared when the request had to go elsewhere (the DM).
   */
  threadTs: string | null;
  /** The Workflow Builder step this approval completes when it ends, if a workflow started it. */
  functionExecutionId: string | null;
}

/** What starting an approval needs; everything else starts empty (see the store's createApproval). */
export interface NewTrackedApproval {
  djbh: string;
  teamId: string;
  request: Pick<ApprovalRequestRecord, 'title' | 'note' | 'locale' | 'createdAt'> &
    Partial<Pick<ApprovalRequestRecord, 'template' | 'againOf'>>;
  parties: {
    requester: Parties['requester'];
    approver: Pick<Approver, 'login' | 'slackId'>;
  };
  slack: Pick<SlackAddress, 'channelId'> &
    Partial<Pick<SlackAddress, 'threadTs' | 'functionExecutionId'>>;
}

export type { AnnouncementKind } from './announcement-rules.ts';

/**
 * One thing the app owes Slack, written in the same transaction as the change it announces (an
 * outbox), then delivered; see announcement-rules.ts for how each kind is delivered and
 * announcement-dispatcher.ts for how a delivery is made exactly once.
 */
export interface Announcement {
  /** `<djbh>:<kind>[:<decision or occurrence or reason>]`: one announcement per fact, whoever records it. */
  id: string;
  djbh: string;
  kind: AnnouncementKind;
  decision: Decision | null;
  /** Which one, for kinds that happen more than once (the n-th reminder). */
  occurrence: number | null;
  /** `skipped`: no longer worth posting (a reminder for an approval decided meanwhile). */
  state: 'pending' | 'sent' | 'failed' | 'skipped';
  attempts: number;
  attemptedAt: Date | null;
  /**
   * True when an earlier attempt may have posted without recording it (it died, timed out or got a
   * 5xx): the next attempt looks for that post before posting again.
   */
  uncertain: boolean;
  /** Not tried again before this moment (backoff, or Slack's Retry-After). */
  nextAttemptAt: Date;
  /**
   * When the first attempt started (kept through re-drives): a post of this announcement, if any,
   * is no older than this. Null before any attempt.
   */
  firstAttemptedAt: Date | null;
  /** When an operator last re-drove it (its retry window starts again); null if never. */
  redrivenAt: Date | null;
  /**
   * How long its retry window stood still while delivery was paused fleet-wide (Slack refused
   * the token): time paused is not time failed. Reset by a re-drive.
   */
  pausedMs: number;
  sentChannel: string | null;
  sentTs: string | null;
  lastError: string | null;
  createdAt: Date;
}

/** The thread a reply goes to: the one the request joined, else the request's own. */
export function replyThread(approval: Pick<TrackedApproval, 'slack'>): string | null {
  const { messageTs, threadTs } = approval.slack;
  return messageTs ? (threadTs ?? messageTs) : null;
}

/**
 * `term`: the approver's (TrackedApproval.parties.approver.term), for a kind about them (its rule's
 * `ofApprover`): from the first handover on, each approver's reminders and DMs are facts of their
 * own (`<djbh>:reminder:1@2` is the second approver's first reminder). Term 0 names none, so ids
 * recorded before handovers existed stay what they were.
 */
export function announcementId(
  djbh: string,
  kind: AnnouncementKind,
  detail?: Decision | number | string,
  term = 0,
): string {
  const base = detail === undefined ? `${djbh}:${kind}` : `${djbh}:${kind}:${detail}`;
  return term > 0 && ruleOf(kind).ofApprover ? `${base}@${term}` : base;
}
