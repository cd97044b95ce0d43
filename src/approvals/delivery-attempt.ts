import { type AnnouncementRule, ruleOf } from './announcement-rules.ts';
import { AnnounceError, type Announcer, type AttemptClock, type Posted } from './announcer.ts';
import {
  afterSearchMissed,
  classifyFailure,
  type FailurePolicy,
  type FailureVerdict,
} from './delivery-failure.ts';
import type { createLanePacer } from './lane-pacer.ts';
import type { AnnouncementClaim, Deliverable, Outbox } from './outbox.ts';
import type { TrackedApproval } from './tracked-approval.ts';

/*
 * One delivery attempt, as a pipeline of named steps: claim the announcement (and its lane's
 * turn), check it is still worth delivering, recover a post an earlier attempt may have made, post,
 * record. Whatever throws on the way is classified by delivery-failure.ts, and its verdict
 * recorded. The dispatcher (announcement-dispatcher.ts) decides which attempts run when.
 */

export type AttemptOutcome =
  | 'sent'
  | 'recovered'
  | 'retry'
  | 'failed'
  | 'skipped'
  | 'lost'
  /** Slack refused the app's token: the attempt is put back and delivery paused fleet-wide. */
  | 'paused';

type Logger = {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
};

export interface AttemptDeps {
  store: Outbox;
  announcer: Announcer;
  logger: Logger;
  /** Whether the service still has the approval undecided (DispatcherDeps.stillPending). */
  stillPending?: (approval: TrackedApproval) => Promise<boolean>;
  onOutcome?: (outcome: AttemptOutcome, kind: string, ms: number) => void;
  random: () => number;
  monotonic: () => number;
  pacer: ReturnType<typeof createLanePacer>;
  /** True once the dispatcher is stopping: an attempt still waiting for its turn gives it back. */
  stopping: () => boolean;
  /** Pauses delivery fleet-wide: Slack refused the app's token. */
  pauseEverything: (reason: string, now: Date) => Promise<void>;
  /** The backoff before attempt `attempts + 1` (announcement-dispatcher.ts's retryDelayMs). */
  retryDelayMs: (attempts: number, random: () => number) => number;
}

export interface AttemptSettings {
  leaseMs: number;
  callTimeoutMs: number;
  laneIntervalMs: number;
  lookaheadMs: number;
  /** The dispatcher's own wait for a lane it posted to ends this much after the database's. */
  paceMarginMs: number;
  failures: FailurePolicy;
}

/** An attempt under way: what it claimed, and what it has learnt so far. */
interface Attempt {
  d: Deliverable;
  rule: AnnouncementRule;
  claim: AnnouncementClaim;
  now: Date;
  clock: AttemptClock;
  /**
   * Whether an earlier attempt may have posted this. It stays so until a search has completed and
   * found nothing: a search that failed or ran out of time proves nothing. Edits and completions
   * are simply done again.
   */
  mayBePosted: boolean;
  /** Whether this attempt has sent its own post (which Slack may then commit late). */
  posting: boolean;
}

/** Delivers one head of a lane at `now`; rejects only when the store fails to record it. */
export function createDeliveryAttempt(deps: AttemptDeps, settings: AttemptSettings) {
  const { store, logger, monotonic, pacer } = deps;
  const backoff = (a: Deliverable['announcement']) =>
    deps.retryDelayMs(a.attempts + 1, deps.random);

  /**
   * Claims the announcement for the lease. Claimed ahead of the lane's pace: waits for it first.
   * Stopped meanwhile, gives it back untouched (the lane keeps its pace) for the next attempt.
   */
  async function claimStep(d: Deliverable, now: Date): Promise<AnnouncementClaim | undefined> {
    const { announcement: a, lane } = d;
    const { leaseMs, lookaheadMs } = settings;
    const horizonMs = settings.failures.commitHorizonMs;
    const claim = await store.claimAnnouncement(a, now, leaseMs, lane, lookaheadMs, horizonMs);
    if (!claim?.laneWaitMs) return claim;
    await sleep(claim.laneWaitMs);
    if (!deps.stopping()) return claim;
    await store.markAnnouncementRetry(claim, {
      error: a.lastError ?? 'stopped before its turn',
      uncertain: a.uncertain,
      nextAttemptAt: now,
    });
    return undefined;
  }

  /** Whether it is still worth delivering: a reminder for an approval decided meanwhile is not. */
  async function checkStep(at: Attempt): Promise<boolean> {
    const { announcement: a, approval } = at.d;
    if (!at.rule.onlyWhilePending || (await worthReminding(approval))) return true;
    await store.markAnnouncementFinal(at.claim, 'skipped', 'decided before the reminder');
    logger.info(
      { announcement: a.id, kind: a.kind, djbh: a.djbh },
      'announcement skipped: decided before it went out',
    );
    return false;
  }

  async function worthReminding(approval: TrackedApproval): Promise<boolean> {
    if (approval.decision !== 'pending' || approval.tracking !== 'active') return false;
    if (approval.approverUnreachableSince) return false;
    if (!deps.stillPending) return true;
    // When the service cannot say, the recorded state (pending) stands.
    return deps.stillPending(approval).catch(() => true);
  }

  /** Looks for an earlier attempt's post; undefined when this attempt is to post. */
  async function recoverStep(at: Attempt): Promise<AttemptOutcome | undefined> {
    if (!at.mayBePosted) return undefined;
    const { announcement: a, approval } = at.d;
    const earlier = await deps.announcer.findDelivered(a, approval, at.clock);
    if (earlier) {
      warnIfOvertaken(await store.markAnnouncementSent(at.claim, earlier, at.now), a.id);
      logger.info(
        { announcement: a.id, kind: a.kind, djbh: a.djbh },
        'announcement was already posted; recorded it',
      );
      return 'recovered';
    }
    const horizonLeftMs = at.claim.commitHorizonLeftMs ?? 0;
    const next = afterSearchMissed({ horizonLeftMs, backoffMs: backoff(a), now: at.now });
    if (next.as === 'post') {
      at.mayBePosted = false;
      return undefined;
    }
    await store.markAnnouncementRetry(at.claim, {
      error: a.lastError ?? 'the earlier post may still appear',
      uncertain: true,
      nextAttemptAt: next.nextAttemptAt,
    });
    logger.debug(
      { announcement: a.id, horizonLeftMs, retryInMs: next.delayMs },
      'earlier post not found yet; Slack may still commit it, so looking again before posting',
    );
    return 'retry';
  }

  async function postStep(at: Attempt): Promise<Posted> {
    at.clock.check();
    at.posting = true;
    return deps.announcer.deliver(at.d.announcement, at.d.approval, at.clock);
  }

  async function recordStep(at: Attempt, posted: Posted): Promise<AttemptOutcome> {
    const { announcement: a, approval, lane } = at.d;
    // The lane's pace counts from Slack's answer (so two posts reach Slack at least the interval
    // apart), and recording the post falls inside the interval rather than adding to it.
    const answered = monotonic();
    const laneWait = () =>
      posted.ts ? Math.max(0, settings.laneIntervalMs - (monotonic() - answered)) : 0;
    const current = await store.markAnnouncementSent(at.claim, posted, at.now, laneWait());
    warnIfOvertaken(current, a.id);
    // At info, so that the default level answers "was it posted?" for each approval.
    if (current) logDelivered(a, posted, a.attempts + 1);
    // Held here until the lane is free in the database too, so this replica comes back for the
    // lane's next post as soon as the fleet allows it, not an idle period later.
    if (posted.ts) pacer.pause(lane, laneWait() - settings.lookaheadMs + settings.paceMarginMs);
    void deps.announcer.afterDelivered?.(a, approval).catch((error: unknown) => {
      logger.debug({ error: messageOf(error) }, 'refresh after a delivery failed');
    });
    return 'sent';
  }

  /** Records what the failure classification says of a failed attempt. */
  async function failureStep(at: Attempt, thrown: unknown): Promise<AttemptOutcome> {
    const a = at.d.announcement;
    const error = asAnnounceError(thrown);
    const verdict = classifyFailure(
      {
        error,
        mayBePosted: at.mayBePosted,
        posting: at.posting,
        announcement: a,
        now: at.now,
        backoffMs: backoff(a),
      },
      settings.failures,
    );
    if (verdict.laneWaitMs > 0) pacer.pause(at.d.lane, verdict.laneWaitMs - settings.lookaheadMs);
    return recordVerdict(at, verdict);
  }

  async function recordVerdict(at: Attempt, verdict: FailureVerdict): Promise<AttemptOutcome> {
    const a = at.d.announcement;
    switch (verdict.as) {
      case 'paused':
        await store.markAnnouncementRetry(at.claim, {
          error: verdict.error,
          uncertain: verdict.uncertain,
          nextAttemptAt: at.now,
        });
        await deps.pauseEverything(verdict.error, at.now);
        return 'paused';
      case 'failed':
        await store.markAnnouncementFinal(at.claim, 'failed', verdict.reason);
        logger.error(
          { announcement: a.id, kind: a.kind, djbh: a.djbh, reason: verdict.reason },
          'announcement failed for good; re-drive it once the cause is fixed',
        );
        return 'failed';
      case 'retry': {
        const { error, uncertain, nextAttemptAt, commitHorizonMs } = verdict;
        await store.markAnnouncementRetry(
          at.claim,
          {
            error,
            uncertain,
            nextAttemptAt,
            ...(commitHorizonMs !== undefined ? { commitHorizonMs } : {}),
          },
          verdict.laneWaitMs,
        );
        // A 429 is routine under load and honoured; other retries are worth a line at warn.
        logger[verdict.routine ? 'debug' : 'warn'](
          { announcement: a.id, kind: a.kind, djbh: a.djbh, error, retryInMs: verdict.delayMs },
          'announcement not delivered yet; will retry',
        );
        return 'retry';
      }
    }
  }

  /** One line per delivered announcement: what it was, where it went (or that nothing was posted). */
  function logDelivered(a: Deliverable['announcement'], posted: Posted, attempt: number): void {
    logger.info(
      {
        announcement: a.id,
        kind: a.kind,
        djbh: a.djbh,
        attempt,
        ...(posted.ts ? { channel: posted.channel, ts: posted.ts } : { postedNothing: true }),
        ...(posted.approverUnreachable ? { approverUnreachable: true } : {}),
      },
      'announcement delivered',
    );
  }

  function warnIfOvertaken(current: boolean, id: string): void {
    // Our lease ran out and another attempt took over; it finds this post by its metadata.
    if (!current) logger.warn({ announcement: id }, 'a later attempt took this announcement over');
  }

  /** No call starts past the attempt's deadline: its last call ends before the lease does. */
  function clockUntil(deadline: number): AttemptClock {
    return {
      check() {
        if (monotonic() > deadline)
          throw new AnnounceError('the attempt ran out of time before its next call', {
            retryable: true,
          });
      },
    };
  }

  async function steps(at: Attempt): Promise<AttemptOutcome> {
    if (!(await checkStep(at))) return 'skipped';
    const recovered = await recoverStep(at);
    if (recovered) return recovered;
    return recordStep(at, await postStep(at));
  }

  return async function deliverOne(d: Deliverable, now: Date): Promise<AttemptOutcome> {
    const started = monotonic();
    const claim = await claimStep(d, now);
    if (!claim) return 'lost';
    const rule = ruleOf(d.announcement.kind);
    const at: Attempt = {
      d,
      rule,
      claim,
      now,
      clock: clockUntil(started + settings.leaseMs - 2 * settings.callTimeoutMs),
      mayBePosted: d.announcement.uncertain && !rule.repeatable,
      posting: false,
    };
    const outcome = await steps(at).catch((thrown: unknown) => failureStep(at, thrown));
    deps.onOutcome?.(outcome, d.announcement.kind, monotonic() - started);
    return outcome;
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Anything unexpected (a dropped database connection, a bug) may pass, and may have posted. */
function asAnnounceError(error: unknown): AnnounceError {
  if (error instanceof AnnounceError) return error;
  return new AnnounceError(messageOf(error), { retryable: true, uncertain: true, cause: error });
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
