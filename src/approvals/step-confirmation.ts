import { createHash } from 'node:crypto';
import { adaptText } from './acceptable-text.ts';
import type { ApprovalParties } from './access-policy.ts';
import type { StepRule } from './steps.ts';

/**
 * An approval is started in a person's name only when that person has seen what will start and
 * confirmed it. A workflow step asks its requester first (in a modal when they ran it themselves,
 * else in a DM); until they press Start nothing is started, and Decline, Cancel, or no answer in
 * time, ends the step with an error.
 */

/**
 * How long a Start may be under way before the sweep takes it for one a crash interrupted: far
 * longer than a start takes (its calls time out within seconds).
 */
export const STARTING_STUCK_MS = 5 * 60_000;

/** How long the requester has to answer, unless configured otherwise (WORKFLOW_CONFIRM_MINUTES). */
export const DEFAULT_CONFIRM_MS = 60 * 60_000;

/**
 * Whether the requester may be asked right where they are, in a modal: they are the person who
 * ran the workflow (the interactor of its interactivity input, which Slack fills in and the
 * workflow cannot forge). That proves only that they did something in the run, never that they
 * saw this step's title, note, approver or channel: it is a chance to ask in place, not consent.
 */
export function mayConfirmInPlace(requester: string, interactor: string | null): boolean {
  return interactor !== null && interactor === requester;
}

/**
 * - `pending`: the requester was asked and has not answered.
 * - `starting`: they pressed Start; the approval is being started (only one press gets here).
 * - `confirmed`: they pressed Start on a replica that was stopping and started nothing; any
 *   replica's next sweep starts it (a workflow run cannot be submitted again, so it is never
 *   failed for a restart).
 * - `started`: the approval exists; its outcome completes the step, as for any step.
 * - `declined`, `expired`, `failed`: nothing was started; the step ends with `reason`.
 */
export type ConfirmationState =
  | 'pending'
  | 'starting'
  | 'confirmed'
  | 'started'
  | 'declined'
  | 'expired'
  | 'failed';

/** A workflow step waiting for its requester's word. Keyed by the step's execution id. */
export interface StepConfirmation {
  executionId: string;
  teamId: string;
  requesterChatId: string;
  /** Who ran the workflow, when the workflow passed its interactivity; null when unknown. */
  startedByChatId: string | null;
  /** The step's inputs, as they will be used on Start. */
  approverChatId: string | null;
  /** The title and note as they will start (startText): what the requester is shown, whole. */
  title: string;
  note: string;
  /**
   * The digest (shownDigest) of the title and note the requester was shown; Start starts only
   * text with this digest. Null for a question asked by a release that did not record it.
   */
  shownDigest: string | null;
  channelId: string | null;
  locale: string;
  state: ConfirmationState;
  /** Why the step ended with an error (declined, expired, could not start). */
  reason: string | null;
  createdAt: Date;
  expiresAt: Date;
  /** The message that asks the requester, once posted. */
  askedIn: { channel: string; ts: string } | null;
  /** The step was told how it ended (an error); false while that is still owed. */
  stepClosed: boolean;
  /**
   * The step named someone away, and the approver is their delegate (delegation.ts): whom, and
   * until when, said beside the approver when the requester is asked. Not stored: a question
   * asked again (after a restart) names the delegate without it.
   */
  approverDelegatedBy?: { chatId: string; until: Date; timeZone: string | undefined };
  /**
   * The steps after the first the step named (its `later_steps` input, workflow-steps.ts): on
   * Start, the request runs in several steps (steps.ts). Absent or empty: one step.
   */
  laterSteps?: StepRule[];
}

/**
 * A step's title or note as the service will be given it (the same adaptation as any draft, see
 * prepareApproval): what the requester is shown, so that what they confirm is what starts.
 */
export function startText(text: string): string {
  return adaptText(text.trim()).text;
}

/**
 * A digest of exactly the title and note a requester was shown: recorded with the question and
 * checked at Start, so that what starts is byte for byte what was shown, or nothing starts.
 */
export function shownDigest(title: string, note: string): string {
  return createHash('sha256').update(title).update('\u0000').update(note).digest('hex');
}

/** The parties the access policy sees in a confirmation: its requester alone may answer it. */
export function confirmationParties(c: Pick<StepConfirmation, 'requesterChatId'>): ApprovalParties {
  return {
    requesterChatId: c.requesterChatId,
    requesterLogin: null,
    approverChatId: null,
    approverLogin: null,
    postedIn: null,
  };
}

export type NewStepConfirmation = Omit<
  StepConfirmation,
  'state' | 'reason' | 'askedIn' | 'stepClosed'
>;

/** The states that end a step with an error and still owe the workflow that error. */
export const ENDED_WITHOUT_APPROVAL: readonly ConfirmationState[] = [
  'declined',
  'expired',
  'failed',
];

/** Confirmations as the flow needs them; implemented in src/store, shared by replicas. */
export interface StepConfirmations {
  create(confirmation: NewStepConfirmation): Promise<void>;
  get(executionId: string): Promise<StepConfirmation | undefined>;
  recordAsked(executionId: string, askedIn: { channel: string; ts: string }): Promise<void>;
  /**
   * Moves a pending confirmation on (Start → `starting`, Decline → `declined`, the question could
   * not be asked → `failed`), only while it is pending and not past its time at `now`. True for
   * the one caller that moved it, whichever replica or double click came second.
   */
  answer(
    executionId: string,
    to: 'starting' | 'declined' | 'failed',
    now: Date,
    reason?: string,
  ): Promise<boolean>;
  /**
   * A Start this replica could not see through (it is stopping; nothing was started): back from
   * `starting` to `confirmed`, for another replica's sweep to start.
   */
  defer(executionId: string): Promise<void>;
  /**
   * Up to `limit` Starts left `confirmed`, each moved to `starting` at `now` by this caller only
   * (two replicas sweeping claim each once); returned as claimed.
   */
  claimConfirmed(now: Date, limit: number): Promise<StepConfirmation[]>;
  /** How a Start ended: the approval started, or could not (with the reason). */
  settle(executionId: string, to: 'started' | 'failed', reason?: string): Promise<void>;
  /** Pending confirmations past their time at `now`, now `expired` with `reason(c)`; returned. */
  expire(now: Date, reason: (c: StepConfirmation) => string): Promise<StepConfirmation[]>;
  /**
   * Confirmations left `starting` since `before` (the app stopped between Start and its outcome):
   * `started` when an approval of that run exists, else `failed` with `reason(c)`. Each is
   * settled by one caller only; returned as settled.
   */
  recoverStarting(
    before: Date,
    reason: (c: StepConfirmation) => string,
  ): Promise<{ started: StepConfirmation[]; failed: StepConfirmation[] }>;
  /** Confirmations that ended without an approval whose step was not yet told. */
  unclosed(limit: number): Promise<StepConfirmation[]>;
  markClosed(executionId: string): Promise<void>;
}
