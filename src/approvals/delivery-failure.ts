import type { AnnounceError } from './announcer.ts';
import type { Announcement } from './tracked-approval.ts';

/*
 * What a failed delivery attempt means for its announcement, decided from facts alone: the
 * dispatcher (announcement-dispatcher.ts) gathers them, asks here, and records the verdict. No
 * clock, no randomness, no store: the backoff is given, so a table of cases is the whole test.
 */

/** How the dispatcher is set up, as far as failures go (DispatcherOptions). */
export interface FailurePolicy {
  /** A failure that may pass is retried this long (from recording, or the last re-drive). */
  retryForMs: number;
  /** A 429's Retry-After is honoured up to this long. Unset: no cap. */
  retryAfterMaxMs?: number;
  /** The lane's usual pace: what it waits after a call that may have posted. */
  laneIntervalMs: number;
  /** How long Slack may still commit a post whose call failed uncertainly. */
  commitHorizonMs: number;
}

export interface FailureFacts {
  error: Pick<
    AnnounceError,
    'message' | 'retryable' | 'uncertain' | 'retryAfterMs' | 'credentials'
  >;
  /** An earlier attempt may have posted this, and no completed search has said otherwise. */
  mayBePosted: boolean;
  /** This attempt sent its own post, which Slack may still commit. */
  posting: boolean;
  announcement: Pick<Announcement, 'createdAt' | 'redrivenAt' | 'pausedMs'>;
  now: Date;
  /** The backoff before the next attempt (retryDelayMs of it), jitter included. */
  backoffMs: number;
}

/** How long the announcement's lane waits before its next post, whatever the verdict. */
interface LaneWait {
  laneWaitMs: number;
}

export type FailureVerdict =
  /** Slack refused the app's token: put back untouched, and delivery paused everywhere. */
  | ({ as: 'paused'; error: string; uncertain: boolean } & LaneWait)
  /** Never going to pass, or still failing at the end of the retry window: failed for good. */
  | ({ as: 'failed'; reason: string } & LaneWait)
  /** Tried again at `nextAttemptAt`; `routine` for a 429 (honoured, worth no warning). */
  | ({
      as: 'retry';
      error: string;
      uncertain: boolean;
      nextAttemptAt: Date;
      delayMs: number;
      /** Our own post may have been taken: Slack may commit it up to this long from now. */
      commitHorizonMs?: number;
      routine: boolean;
    } & LaneWait);

/** `ms` as the retry window is written in docs and logs: hours when whole, else minutes. */
export function hours(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`;
}

/** What a failed attempt means: paused, failed for good, or retried when. */
export function classifyFailure(facts: FailureFacts, policy: FailurePolicy): FailureVerdict {
  const { error, now } = facts;
  const uncertain = facts.mayBePosted || error.uncertain;
  const retryAfterMs =
    error.retryAfterMs === undefined
      ? undefined
      : Math.min(error.retryAfterMs, policy.retryAfterMaxMs ?? Number.POSITIVE_INFINITY);
  // The lane waits for Slack's Retry-After, or its usual pace when the call may have posted.
  const laneWaitMs = retryAfterMs ?? (error.uncertain ? policy.laneIntervalMs : 0);
  const reason = error.message;
  // Not this announcement's fault: it waits, untouched, for the token to work again.
  if (error.credentials) return { as: 'paused', error: reason, uncertain, laneWaitMs };
  // The window stands still while delivery is paused fleet-wide (see resumeDelivery).
  const a = facts.announcement;
  const windowEnds = (a.redrivenAt ?? a.createdAt).getTime() + a.pausedMs + policy.retryForMs;
  if (!error.retryable) return { as: 'failed', reason, laneWaitMs };
  if (now.getTime() >= windowEnds)
    return {
      as: 'failed',
      reason: `still failing after ${hours(policy.retryForMs)}: ${reason}`,
      laneWaitMs,
    };
  // Never past the retry window: the last attempt comes at its end, and fails if it fails too.
  const delayMs = Math.min(
    Math.max(retryAfterMs ?? 0, facts.backoffMs),
    Math.max(0, windowEnds - now.getTime()),
  );
  return {
    as: 'retry',
    error: reason,
    uncertain,
    nextAttemptAt: new Date(now.getTime() + delayMs),
    delayMs,
    ...(facts.posting && error.uncertain ? { commitHorizonMs: policy.commitHorizonMs } : {}),
    routine: error.retryAfterMs !== undefined,
    laneWaitMs,
  };
}

/**
 * A search for an earlier attempt's post found nothing. While Slack may still commit that post
 * (`horizonLeftMs` > 0), not found proves nothing: look again later (after the backoff, and once
 * more just after the horizon), the lane free meanwhile. Past it: post.
 */
export function afterSearchMissed(input: {
  horizonLeftMs: number;
  backoffMs: number;
  now: Date;
}): { as: 'post' } | { as: 'look-again'; nextAttemptAt: Date; delayMs: number } {
  if (input.horizonLeftMs <= 0) return { as: 'post' };
  const delayMs = Math.min(input.backoffMs, input.horizonLeftMs);
  return { as: 'look-again', nextAttemptAt: new Date(input.now.getTime() + delayMs), delayMs };
}
